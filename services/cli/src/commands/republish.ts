import { parseArgs } from 'node:util';
import { securityOf } from '@vault-yield/common';
import { createPgPool, indexerCheckpoints } from '@vault-yield/store';
import { z } from 'zod';
import type { Command } from '../command.js';
import { republishEnvSchema } from '../config.js';
import { failure, optionValue, usageError } from '../ops/env.js';
import { namedTopics } from '../ops/live-topics.js';

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed 20-byte address');
const block = z.coerce.number().int().nonnegative();

export const republishCommand: Command<typeof republishEnvSchema> = {
  env: republishEnvSchema,
  log: { name: 'republish' },
  help: `usage: vault-yield republish --vault 0x… --from-block N [--to-block M] [--dry-run] [--json]

Publishes a vault's records of blocks N..M (default M: the indexer's checkpoint) to the log again,
re-derived from the chain exactly as the indexer derived them: the same decoding and record
construction, the sequence numbers they were published with (indexer_vault_seqs; below the reorg
window their compacted spans, recounted from the chain), contexts read at their blocks. A vault the projector holds behind a gap in its numbers (\`vault-yield status\`
prints the command, with the blocks) then folds the missing records and those it held; records
the log already holds are duplicates the projector skips.

Refused (exit 1, one line): a vault the indexer does not know; a --from-block above the indexer's
checkpoint (nothing published there to re-derive); a block reorganised since it was published
(its records are void); a block (or a compacted span) whose events no longer match its numbers. Revert records are not
re-derivable (their orphaned blocks are gone): their numbers are reported, not published.

options:
  --vault 0x…        the vault (required)
  --from-block N     first block (required; the held vault's \`behind.gap.fromBlock\`)
  --to-block M       last block (default: the indexer's checkpoint)
  --dry-run          re-derive and report; publish nothing
  --json             the result as JSON on stdout

environment:
  DATABASE_URL, KAFKA_BROKERS, RPC_URL, FACTORY_ADDRESS (required); KAFKA_TOPIC (the topic of the indexer's checkpoint, else vault-records; another is refused);
  CHAIN_ID; FEED_HEARTBEAT_SECONDS, FEED_HEARTBEATS, VALUATION_LENS (the indexer's); INDEXER_SCHEMA (default
  PROJECTION_SCHEMA); KAFKA_SASL_*, KAFKA_SSL*`,
  async run(argv, context) {
    const { values } = parseArgs({
      args: argv,
      options: {
        vault: { type: 'string' },
        'from-block': { type: 'string' },
        'to-block': { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    if (!values.vault) throw usageError('--vault is required');
    if (values['from-block'] === undefined) throw usageError('--from-block is required');
    const vault = optionValue('vault', address, values.vault) as `0x${string}`;
    const fromBlock = optionValue('from-block', block, values['from-block']);
    const toBlock =
      values['to-block'] === undefined ? undefined : optionValue('to-block', block, values['to-block']);
    if (toBlock !== undefined && toBlock < fromBlock) throw usageError('--to-block is below --from-block');
    const ctx = context();
    const { config: env, log: logger } = ctx;
    const schema = env.INDEXER_SCHEMA ?? env.PROJECTION_SCHEMA;
    const found = await indexerCheckpoint(env.DATABASE_URL, schema, env.CHAIN_ID);
    const checkpoint = found?.blockNumber ?? null;
    // The records go where the indexer publishes: the topic its checkpoint is of. KAFKA_TOPIC
    // naming another (an environment left from before a reindex) is refused, not obeyed.
    const named = namedTopics(ctx).vault;
    if (found?.topic && named !== undefined && named !== found.topic)
      throw usageError(
        `KAFKA_TOPIC=${named}, but the indexer of ${schema} publishes to ${found.topic}: unset KAFKA_TOPIC or set it to ${found.topic} (republish refused, nothing published)`,
      );
    const topic = found?.topic ?? env.KAFKA_TOPIC;
    if (checkpoint !== null && fromBlock > checkpoint)
      throw failure(
        `nothing to re-derive: --from-block ${fromBlock} is above the indexer's checkpoint ${checkpoint} (in ${schema}), ` +
          "so no record of those blocks was published yet; check --from-block (`vault-yield status` prints a held vault's blocks)",
      );
    const { republishVault, RepublishError } = await import('@vault-yield/indexer');
    const result = await republishVault({
      rpcUrl: env.RPC_URL,
      chainId: env.CHAIN_ID,
      factory: env.FACTORY_ADDRESS as `0x${string}`,
      databaseUrl: env.DATABASE_URL,
      schema,
      kafka: {
        brokers: env.KAFKA_BROKERS,
        topic,
        security: securityOf(ctx.kafka),
        connectBudgetMs: ctx.kafka?.connectBudgetMs ?? null,
        encoding: env.RECORD_ENCODING,
      },
      heartbeats: {
        default: env.FEED_HEARTBEAT_SECONDS ?? 3600,
        byFeed: Object.fromEntries(
          Object.entries(env.FEED_HEARTBEATS ?? {}).map(([f, s]) => [f.toLowerCase(), s]),
        ),
      },
      valuationLens: env.VALUATION_LENS,
      vault,
      fromBlock,
      toBlock,
      dryRun: values['dry-run'],
      logger,
    }).catch((err: unknown) => {
      if (err instanceof RepublishError && /is unknown to the indexer/.test(err.message))
        throw failure(
          `${err.message}: check --vault, and that INDEXER_SCHEMA (default PROJECTION_SCHEMA) names the live indexer's schema`,
        );
      throw err;
    });
    if (values.json) console.log(JSON.stringify(result, null, 2));
    else {
      const done = values['dry-run']
        ? 're-derived (dry run)'
        : result.published
          ? 'republished'
          : 'nothing to republish:';
      console.log(
        `${done} ${result.records} records of ${result.vault}, ` +
          `blocks ${result.fromBlock}..${result.toBlock}, seq ${result.firstSeq ?? '-'}..${result.lastSeq ?? '-'}`,
      );
      for (const [a, b] of result.notRederived)
        console.log(`not re-derivable (revert records): seq ${a}..${b}`);
    }
    return 0;
  },
};

/**
 * The block the indexer has published up to in `schema` (of CHAIN_ID, or of its one chain), or
 * null when that is not known (no checkpoint yet, several chains and no CHAIN_ID).
 */
async function indexerCheckpoint(
  url: string,
  schema: string,
  chainId: number | undefined,
): Promise<{ blockNumber: number; topic: string | null } | null> {
  const pool = createPgPool({ url, schema, applicationName: 'republish', max: 1 });
  try {
    const rows = await indexerCheckpoints(pool, schema);
    const row =
      chainId === undefined
        ? rows.length === 1
          ? rows[0]
          : undefined
        : rows.find((r) => r.chainId === chainId);
    return row ? { blockNumber: row.blockNumber, topic: row.topic } : null;
  } finally {
    await pool.end();
  }
}
