import { parseArgs } from 'node:util';
import type { ChainClient } from '@vault-yield/chain';
import { envField, type KafkaConnection } from '@vault-yield/common';
// The indexer's config schema only (zod, no viem): the package's index loads the whole indexer,
// which this command imports once its arguments and environment have been checked.
import { indexerConfigSchema } from '@vault-yield/indexer/config';
import { createLogAdmin } from '@vault-yield/log';
import {
  createPgPool,
  type IndexerCheckpointRow,
  ident,
  indexerCheckpoints,
  listBuilds,
  liveSchema,
  migrate,
  type Pool,
  schemaWriters,
  viewReaders,
  withRoles,
} from '@vault-yield/store';
import type { z } from 'zod';
import type { Command } from '../command.js';
import { reindexEnvSchema } from '../config.js';
import { chainCuts, cutLines, liveIndexer } from '../ops/chains-cut.js';
import { ddlUrl, failure, optionValue, parseDuration, usageError } from '../ops/env.js';
import { endpointOf, errorText } from '../ops/failure.js';
import { createProgress } from '../ops/progress.js';

type ReindexEnv = z.output<typeof reindexEnvSchema>;

/** The default checkpoint namespace of a topic: stable, so a re-run resumes the same one. */
export function namespaceFor(topic: string): string {
  const slug = topic
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return `vault_yield_idx_${slug}`.slice(0, 63);
}

/** Rebuild options `reindex` passes through to `rebuild` as given. */
const REBUILD_OPTIONS = [
  'schema',
  'group',
  'dry-run',
  'follow',
  'retire-old',
  'grace',
  'quiet-for',
  'no-market',
  'unlogged',
  'all-indexes',
] as const;

/** Partitions of a topic reindex creates, unless --partitions says otherwise. */
const DEFAULT_PARTITIONS = 12;

export const reindexCommand: Command<typeof reindexEnvSchema> = {
  env: reindexEnvSchema,
  log: { name: 'reindex', format: true },
  help: `usage: vault-yield reindex --topic NEW [--namespace NAME] [--partitions N] [--start-block N]
                         [--no-rebuild] [rebuild options: --schema, --group, --dry-run, --follow, …]

Runs the indexer from the factory's deployment block (or --start-block / START_BLOCK) up to the
chain head as it is when the command starts, less CONFIRMATIONS, publishing into the new topic
NEW. That block (printed) is the indexer's end block: it publishes and checkpoints it, then stops;
blocks mined meanwhile are left to the indexer moved to NEW afterwards, which resumes from that
checkpoint. The indexer runs with a fresh checkpoint namespace (a schema of its own, so the live
indexer's checkpoint is untouched) and the live indexer's settings (MARK_*, CONFIRMATIONS, …: the
same variables, the same defaults), so the new log holds the records the live one does. Then runs
\`vault-yield rebuild --topic NEW\` (with the rebuild options given), which folds NEW into a fresh
projection schema and switches the reader to it. Interrupted? Run the same command again: the
indexer resumes from the namespace's checkpoint (republishing at most one batch: duplicates are
harmless), and the rebuild resumes its recorded build.

Several chains (one indexer per chain, one topic): the new log holds them all. Cut each chain into
the same NEW and namespace by a run with that chain's environment (RPC_URL, CHAIN_ID,
FACTORY_ADDRESS, START_BLOCK, … as its live indexer's) and --no-rebuild; the namespace keeps a
checkpoint per chain, so the runs never touch each other's and each resumes its own. The rebuild
(the last run without --no-rebuild, or a re-run) builds and switches only once every chain the
live indexers follow (a checkpoint in the live indexer's schema) has a checkpoint in the
namespace: otherwise it is refused (exit 2, nothing built), naming each chain missing and the
command that cuts it. A chain cut below its live checkpoint is not refused: its FOLLOW_LIVE
indexer, moved to NEW, publishes the blocks since from the namespace's checkpoint. Each run
prints every chain's cut against its live checkpoint.

Refused before anything is written (exit 2): NEW equal to KAFKA_TOPIC (the live log); a namespace
that is the live indexer's schema, the views schema or a projection schema; NEW already holding
records while the namespace has no checkpoint (not written by this reindex), a namespace whose
checkpoint (of any chain) is of another topic (the indexer records its topic with each
checkpoint) or whose topic no longer exists; CHAIN_ID naming another chain than RPC_URL's node;
a namespace whose checkpoint of this chain is above the chain head (written on another chain: a
dev chain restarted since); a start block above the chain head (or above the head less
CONFIRMATIONS), or above a vault the factory created; a --schema that is live, retired or dropped.

Afterwards, services with FOLLOW_LIVE=true (npm start's, docker compose's) move by themselves once
the switch is made: the indexer to NEW and the namespace (recorded with the build; it resumes from
the namespace's checkpoint), the projector to the new schema; readers' /ready reads NEW. Move a
pinned indexer and projector as the command prints.

options:
  --topic NEW          topic to write (required; created with --partitions if missing)
  --namespace NAME     indexer checkpoint schema (default vault_yield_idx_<topic>)
  --partitions N       partitions of the new topic (default 12; an existing topic keeps its own)
  --start-block N      first block (default: START_BLOCK, else the factory's deployment block)
  --no-rebuild         stop after the log is rebuilt

environment:
  DATABASE_URL, KAFKA_BROKERS, RPC_URL, FACTORY_ADDRESS (required); the live indexer's CHAIN_ID,
  START_BLOCK, CONFIRMATIONS (0), MAX_BLOCK_RANGE, CONCURRENCY, REORG_WINDOW, MARK_INTERVAL_BLOCKS,
  MARK_MIN_INTERVAL_MS, FEED_HEARTBEAT_SECONDS, FEED_HEARTBEATS, VALUATION_LENS; KAFKA_TOPIC (the live topic,
  vault-records); INDEXER_SCHEMA (default PROJECTION_SCHEMA); and those of rebuild`,
  async run(argv, context) {
    const { values, tokens } = parseArgs({
      args: argv,
      tokens: true,
      options: {
        topic: { type: 'string' },
        namespace: { type: 'string' },
        partitions: { type: 'string' },
        'start-block': { type: 'string' },
        'no-rebuild': { type: 'boolean', default: false },
        schema: { type: 'string' },
        group: { type: 'string' },
        'dry-run': { type: 'boolean' },
        follow: { type: 'boolean' },
        'retire-old': { type: 'boolean' },
        grace: { type: 'string' },
        'quiet-for': { type: 'string' },
        'no-market': { type: 'boolean' },
        unlogged: { type: 'boolean' },
        'all-indexes': { type: 'boolean' },
      },
    });
    if (!values.topic) {
      console.error('usage: vault-yield reindex --topic NEW (see --help)');
      return 2;
    }
    const topic = optionValue('topic', envField.topic(), values.topic);
    const namespace = optionValue(
      'namespace',
      envField.identifier(),
      values.namespace ?? namespaceFor(topic),
    );
    const requestedPartitions =
      values.partitions === undefined
        ? undefined
        : optionValue('partitions', envField.int(1, 1024), values.partitions);
    const partitions = requestedPartitions ?? DEFAULT_PARTITIONS;
    const startArg =
      values['start-block'] === undefined
        ? undefined
        : optionValue('start-block', envField.int(0), values['start-block']);
    const schemaArg =
      values.schema === undefined ? undefined : optionValue('schema', envField.identifier(), values.schema);
    const rebuildOptions = (tokens ?? []).flatMap((t) =>
      t.kind === 'option' && (REBUILD_OPTIONS as readonly string[]).includes(t.name) ? [t] : [],
    );
    if (values['no-rebuild'] && rebuildOptions.length > 0)
      throw usageError(
        `--no-rebuild cannot be combined with --${rebuildOptions[0]?.name} (a rebuild option)`,
      );
    // Rebuild options are checked now, not after the log is rebuilt.
    if (values.grace !== undefined) parseDuration(values.grace);
    if (values['quiet-for'] !== undefined) parseDuration(values['quiet-for']);
    const ctx = context();
    const env = ctx.config;
    const kafka = ctx.kafka!;
    if (topic === env.KAFKA_TOPIC) {
      throw usageError(
        `--topic ${topic} is the live topic (KAFKA_TOPIC): reindex writes a NEW topic, then switches to it`,
      );
    }

    // The indexer's own default when unset (its config schema holds every default).
    const confirmations = indexerConfigSchema.shape.confirmations.parse(env.CONFIRMATIONS);
    // A new checkpoint namespace is a schema to create: the migrator's URL, for the run too.
    const pool = createPgPool({ url: ddlUrl(env), applicationName: 'vault-yield-reindex', max: 1 });
    const startBlock = startArg ?? env.START_BLOCK;
    let head: number;
    let checkpoint: number | null;
    let chainId: number;
    try {
      await checkSchemas(pool, env, namespace, schemaArg);
      const checkpoints = await indexerCheckpoints(pool, namespace);
      await checkTopicMatches(kafka, topic, namespace, checkpoints, requestedPartitions);
      const { createChainClient, describeRpcError, getChainIdFromNode, getHeadNumber, readFactoryInfo } =
        await import('@vault-yield/chain');
      const client = createChainClient({ rpcUrl: env.RPC_URL, chainId: env.CHAIN_ID, cacheTime: 0 });
      const unread = (err: unknown) =>
        failure(
          `cannot read the factory ${env.FACTORY_ADDRESS} at RPC_URL ${endpointOf(env.RPC_URL)}: ${describeRpcError(err)} ` +
            '(is the node up, and FACTORY_ADDRESS the factory on its chain?)',
          err,
        );
      // The namespace holds one checkpoint per chain: this run resumes RPC_URL's chain's.
      chainId = await getChainIdFromNode(client).catch((err: unknown) => {
        throw unread(err);
      });
      if (env.CHAIN_ID !== undefined && env.CHAIN_ID !== chainId)
        throw usageError(
          `CHAIN_ID is ${env.CHAIN_ID}, but RPC_URL ${endpointOf(env.RPC_URL)} is a node of chain ${chainId}: ` +
            'set both to the chain to cut (one run per chain, each with its own RPC_URL, CHAIN_ID, FACTORY_ADDRESS)',
        );
      checkpoint = checkpoints.find((c) => c.chainId === chainId)?.blockNumber ?? null;
      head = await getHeadNumber(client).catch((err: unknown) => {
        throw unread(err);
      });
      // A checkpoint above the head was written on another chain (a dev chain restarted since):
      // resuming it would read blocks this chain does not have.
      if (checkpoint !== null && checkpoint > head)
        throw usageError(
          `--namespace ${namespace} is checkpointed at block ${checkpoint}, above the chain head ${head}: it was written on ` +
            `another chain (one reset or restarted since), so ${topic} holds that chain's records; reindex into a new ` +
            `topic (--topic NEW, its namespace is new too), or drop schema ${namespace} and topic ${topic} and run again`,
        );
      const factory = await readFactoryInfo(client, env.FACTORY_ADDRESS).catch((err: unknown) => {
        throw unread(err);
      });
      const deploymentBlock = Number(factory.deploymentBlock);
      if (checkpoint === null && startBlock !== undefined)
        await checkStartBlock(client, env, startBlock, deploymentBlock, head);
      else if (checkpoint !== null && startArg !== undefined)
        process.stderr.write(
          `--start-block ignored: resuming ${namespace} from its checkpoint ${checkpoint}\n`,
        );
      const first = startBlock ?? deploymentBlock;
      if (checkpoint === null && first > head - confirmations)
        throw usageError(
          `${startBlock === undefined ? 'the factory\u2019s deployment block' : 'start block'} ${first} is above block ` +
            `${head - confirmations}, the chain head ${head} less CONFIRMATIONS ${confirmations}: nothing confirmed to index yet`,
        );
      // A fresh checkpoint namespace: the migrations create indexer_checkpoint & co there.
      // The live indexer takes the namespace over afterwards: DML granted to the roles that write
      // the live indexer's schema (WRITER_ROLE set or not), and to WRITER_ROLE.
      const liveIndexer = env.INDEXER_SCHEMA ?? env.PROJECTION_SCHEMA;
      const writers = withRoles(env.WRITER_ROLE, await schemaWriters(pool, liveIndexer));
      if (writers.length === 0) await migrate(pool, namespace);
      for (const writerRole of writers) await migrate(pool, namespace, undefined, { writerRole });
      // The reader's /ready reads the live log's checkpoint once the build is live: the roles that
      // read the views (and READER_ROLE) may read the namespace's checkpoint (nothing else of it).
      await grantCheckpointReads(
        pool,
        namespace,
        withRoles(env.READER_ROLE, await viewReaders(pool, env.VIEWS_SCHEMA)),
      );
    } finally {
      await pool.end();
    }
    // The log ends at the head seen now, less the confirmations the indexer keeps behind it: the
    // indexer stops there (blocks mined meanwhile are left to the live indexer).
    let target = Math.max(0, head - confirmations);
    if (checkpoint !== null && checkpoint >= target) {
      process.stderr.write(
        `${namespace} is checkpointed at block ${checkpoint}, at or above block ${target} (chain head ${head} less CONFIRMATIONS ${confirmations}): nothing to index\n`,
      );
      target = checkpoint;
    } else {
      process.stderr.write(
        `reindexing ${topic} up to block ${target} (chain head ${head} at the start, CONFIRMATIONS ${confirmations}) for chain ${chainId}\n`,
      );
    }

    const { createIndexer } = await import('@vault-yield/indexer');
    const indexer = createIndexer(
      {
        rpcUrl: env.RPC_URL,
        chainId: env.CHAIN_ID,
        factory: env.FACTORY_ADDRESS,
        startBlock,
        confirmations: confirmations,
        endBlock: target,
        kafka: { brokers: env.KAFKA_BROKERS, topic, partitions },
        databaseUrl: ddlUrl(env),
        schema: namespace,
        maxBlockRange: env.MAX_BLOCK_RANGE,
        concurrency: env.CONCURRENCY,
        reorgWindow: env.REORG_WINDOW,
        mark: { intervalBlocks: env.MARK_INTERVAL_BLOCKS, minIntervalMs: env.MARK_MIN_INTERVAL_MS },
        heartbeats: { default: env.FEED_HEARTBEAT_SECONDS, byFeed: env.FEED_HEARTBEATS },
        valuationLens: env.VALUATION_LENS,
      },
      ctx,
    );
    const progress = createProgress(`reindex ${topic}`, process.stderr, { unit: 'blocks' });
    await indexer.start();
    const from = indexer.status().checkpoint.blockNumber;
    const ticker = setInterval(() => {
      const s = indexer.status();
      progress.update(Math.max(0, s.checkpoint.blockNumber - from), Math.max(0, target - from));
    }, 1000);
    try {
      // Resolves once the end block is checkpointed: the indexer does not follow the head.
      await indexer.done;
    } catch (err) {
      // Its words on one line, redacted by main (a library's error carries the RPC URL).
      throw failure(
        `the indexer halted at block ${indexer.status().checkpoint.blockNumber}: ${errorText(err)} ` +
          '(run the same command again to resume; --debug for the stack)',
        err,
      );
    } finally {
      clearInterval(ticker);
      await indexer.stop();
    }
    const s = indexer.status();
    progress.finish(
      `log rebuilt to block ${s.checkpoint.blockNumber}: ${s.recordsPublished} records published into ${topic} (${s.vaults} vaults)`,
    );
    console.log(
      `reindexed ${topic} to block ${s.checkpoint.blockNumber} (the chain head ${head} seen at the start, less CONFIRMATIONS ${confirmations}) for chain ${chainId}: ${s.recordsPublished} records published by this run, ${s.vaults} vaults (namespace ${namespace})`,
    );
    // Every chain the live deployment follows, against this namespace: one log holds them all.
    const cuts = await withPool(env, async (db) => {
      const live = await liveIndexer(db, ctx, env.VIEWS_SCHEMA, env.PROJECTION_SCHEMA);
      return chainCuts(db, live.schema, live.topic ?? env.KAFKA_TOPIC, namespace);
    });
    for (const line of cutLines(cuts, topic)) console.log(line);
    const missing = cuts.filter((c) => c.cut === null).map((c) => c.chainId);
    if (missing.length > 0)
      console.log(
        `next: cut chain${missing.length > 1 ? 's' : ''} ${missing.join(', ')} into ${topic} too: vault-yield reindex --topic ${topic} --namespace ${namespace} --no-rebuild with each chain's RPC_URL, CHAIN_ID, FACTORY_ADDRESS (and its live indexer's START_BLOCK, CONFIRMATIONS, …); the switch waits for every chain`,
      );
    console.log(
      values['no-rebuild']
        ? `next: run the same command without --no-rebuild to fold ${topic} and switch to it (nothing left to index; indexers with FOLLOW_LIVE=true then move to ${topic} and ${namespace} by themselves: the build records the namespace); a pinned indexer, once ${topic} is live: KAFKA_TOPIC=${topic} PROJECTION_SCHEMA=${namespace} (it resumes from block ${s.checkpoint.blockNumber})`
        : `next: indexers with FOLLOW_LIVE=true (npm start's, docker compose's) move to ${topic} and the checkpoint namespace ${namespace} by themselves once the switch below is made, and readers' /ready reads ${topic}; a pinned indexer: run it with KAFKA_TOPIC=${topic} PROJECTION_SCHEMA=${namespace} (it resumes from block ${s.checkpoint.blockNumber}), then stop the one writing to the old topic`,
    );
    if (values['no-rebuild']) return 0;

    // Pass the rebuild options through as given.
    const passthrough = rebuildOptions.flatMap((t) =>
      t.value === undefined ? [`--${t.name}`] : [`--${t.name}`, t.value],
    );
    const { rebuild } = await import('./rebuild.js');
    return rebuild(['--topic', topic, ...passthrough], context, 'reindex', namespace);
  },
};

/** Runs `f` on a pool of one connection (the migrator's URL), then closes it. */
async function withPool<T>(env: ReindexEnv, f: (db: Pool) => Promise<T>): Promise<T> {
  const pool = createPgPool({ url: ddlUrl(env), applicationName: 'vault-yield-reindex', max: 1 });
  try {
    return await f(pool);
  } finally {
    await pool.end();
  }
}

/** Lets `roles` read a namespace's checkpoint and block hashes (the reader's freshness). */
async function grantCheckpointReads(pool: Pool, namespace: string, roles: readonly string[]): Promise<void> {
  const ns = ident(namespace);
  for (const role of roles) {
    await pool.query(`grant usage on schema ${ns} to ${ident(role)}`);
    await pool.query(`grant select on ${ns}.indexer_checkpoint, ${ns}.indexer_blocks to ${ident(role)}`);
  }
}

/**
 * The namespace holds the new log's checkpoint only: reusing the live indexer's schema would move
 * the live checkpoint (the live indexer would skip what reindex indexed), and a projection schema
 * would mix indexer state into a schema that may be switched, retired or dropped. The rebuild's
 * --schema must be one a build can still write.
 */
async function checkSchemas(
  pool: Pool,
  env: ReindexEnv,
  namespace: string,
  schemaArg?: string,
): Promise<void> {
  const refuse = (why: string) =>
    usageError(`--namespace ${namespace}: ${why}; pick another (default: vault_yield_idx_<topic>)`);
  const indexerSchema = env.INDEXER_SCHEMA ?? env.PROJECTION_SCHEMA;
  if (namespace === indexerSchema)
    throw refuse('it is the live indexer\u2019s schema (INDEXER_SCHEMA / PROJECTION_SCHEMA)');
  if (namespace === env.PROJECTION_SCHEMA) throw refuse('it is the projection schema (PROJECTION_SCHEMA)');
  if (namespace === env.VIEWS_SCHEMA) throw refuse('it is the views schema (VIEWS_SCHEMA)');
  if (namespace === schemaArg) throw refuse('it is the schema the rebuild builds (--schema)');
  if (namespace === (await liveSchema(pool, env.VIEWS_SCHEMA)))
    throw refuse('it is the live projection schema');
  const builds = await listBuilds(pool, env.VIEWS_SCHEMA);
  const build = builds.find((b) => b.schema === namespace);
  if (build) throw refuse(`it is a projection schema (${build.purpose} build, ${build.state})`);
  // The rebuild would refuse these once the log is rebuilt: say so before.
  const target = builds.find((b) => b.schema === schemaArg);
  if (target && ['live', 'retired', 'dropped'].includes(target.state))
    throw usageError(`--schema ${schemaArg}: that schema is ${target.state}; pick a new schema name`);
}

/**
 * The namespace and the topic must belong together. A fresh namespace writes the whole history,
 * so the topic must not hold another run's records; a namespace with a checkpoint resumes, so
 * the checkpoint must be of this topic (its `topic`, the column the indexer itself refuses a
 * checkpoint of another topic by): resuming another topic's would leave the new log without its
 * beginning, as would resuming one whose topic is gone. One written before migration 0008 records
 * no topic and is adopted, as the indexer does.
 */
async function checkTopicMatches(
  kafka: KafkaConnection,
  topic: string,
  namespace: string,
  checkpoints: readonly IndexerCheckpointRow[],
  requestedPartitions: number | undefined,
): Promise<void> {
  // One checkpoint per chain cut into the namespace (each chain of a deployment is cut into the
  // same topic and namespace by a run of its own): every one must be of this topic.
  const foreign = checkpoints.find((c) => c.topic !== null && c.topic !== topic);
  if (foreign)
    throw usageError(
      `--namespace ${namespace} holds the checkpoint (block ${foreign.blockNumber}) of topic ${foreign.topic}, not ${topic}` +
        `${checkpoints.length > 1 ? ` (chain ${foreign.chainId})` : ''}: ` +
        `resuming it would leave ${topic} without the history up to that block; pick a new namespace ` +
        '(default vault_yield_idx_<topic>)',
    );
  const admin = await createLogAdmin({ ...kafka, clientId: 'vault-yield-reindex' });
  try {
    const exists = (await admin.listTopics()).includes(topic);
    if (exists && requestedPartitions !== undefined) {
      // An existing topic keeps its partitions (a vault's records stay on one partition): a
      // different count asked for would be silently ignored.
      const has = (await admin.offsets(topic)).length;
      if (has !== requestedPartitions)
        throw usageError(
          `--partitions ${requestedPartitions}: topic ${topic} already has ${has} partitions (omit --partitions to use them)`,
        );
    }
    const first = checkpoints[0];
    if (first) {
      // This chain's own checkpoint resumes; another chain's means its records are in the topic
      // already (this chain's are appended beside them). Either way the topic must still hold them.
      if (exists) return;
      // Its own topic, gone (deleted since): resuming would start the new log at the checkpoint.
      throw usageError(
        `--namespace ${namespace} holds a checkpoint at block ${first.blockNumber}${checkpoints.length > 1 ? ` (chain ${first.chainId})` : ''}, but topic ${topic} does not exist: ` +
          'resuming it would skip the history before that block; pick a new namespace',
      );
    }
    if (!exists) return;
    const held = (await admin.offsets(topic)).reduce((n, o) => n + Number(BigInt(o.high) - BigInt(o.low)), 0);
    if (held > 0) {
      throw usageError(
        `--topic ${topic} already holds ${held} records, but namespace ${namespace} has no checkpoint: ` +
          'they were not written by this reindex (pick a new topic, or --namespace the one that wrote it)',
      );
    }
  } finally {
    await admin.close();
  }
}

/** A start block past the head, or past vaults the factory created, would make a partial log. */
async function checkStartBlock(
  client: ChainClient,
  env: ReindexEnv,
  startBlock: number,
  deploymentBlock: number,
  head: number,
): Promise<void> {
  const option = `start block ${startBlock}`;
  if (startBlock > head) throw usageError(`${option} is above the chain head ${head}`);
  if (startBlock <= deploymentBlock) return;
  const { eventTopics, getLogsAdaptive } = await import('@vault-yield/chain');
  const created = await getLogsAdaptive(
    client,
    { address: [env.FACTORY_ADDRESS], topic0: [eventTopics.vaultCreated] },
    deploymentBlock,
    startBlock - 1,
    { retries: 3 },
  );
  if (created.length > 0) {
    throw usageError(
      `${option} is above block ${Number(created[0]?.blockNumber)}, where the factory created a vault: ` +
        `the new log would miss ${created.length} vault(s); start at or below the deployment block ${deploymentBlock}`,
    );
  }
}
