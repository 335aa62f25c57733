import { parseArgs } from 'node:util';
import { envField } from '@vault-yield/common';
import {
  type BuildRecord,
  createPgPool,
  listBuilds,
  liveSchema,
  type RetireDecision,
  retireSchemas,
  type SwitchResult,
  schemaExists,
  switchLive,
} from '@vault-yield/store';
import type { Command } from '../command.js';
import { buildEnvSchema, type OpsEnv } from '../config.js';
import type { CliContext } from '../context.js';
import { runBuild } from '../ops/build.js';
import { chainCuts, cutLines, liveIndexer, requireEveryChainCut } from '../ops/chains-cut.js';
import { ddlUrl, optionValue, parseDuration, stamp } from '../ops/env.js';
import { type LiveSources, liveSources, namedTopics, refuseOtherTopics } from '../ops/live-topics.js';

const DEFAULT_GRACE = '1h';
const DEFAULT_QUIET = '60s';

export const rebuildCommand: Command<typeof buildEnvSchema> = {
  env: buildEnvSchema,
  log: { name: 'rebuild' },
  help: `usage: vault-yield rebuild [--schema NAME] [--group NAME] [--topic NAME] [--dry-run]
                         [--follow] [--retire-old] [--grace DURATION] [--quiet-for DURATION]
                         [--no-market] [--unlogged] [--all-indexes]
       vault-yield rebuild switch --schema NAME
       vault-yield rebuild retire [--grace DURATION] [--quiet-for DURATION] [--dry-run]
       vault-yield rebuild list [--json]

Folds the event log from offset 0 into a fresh projection schema with a new consumer group,
while the live projector and the reader keep serving. The schema is built without its secondary
indexes (primary keys and unique indexes stay); once it has caught up with the topic's high
watermarks, the indexes are built (and, with --unlogged, the tables set logged), the tail folded, and the
reader's views schema is switched to it in one transaction. Progress (records/s, ETA) goes to
stderr. Interrupted (crash, kill)? Run the same command again: it resumes the unfinished build
recorded in the views schema (same schema and group) from the offsets stored with its rows.
The strategy tables (screen, catalogue) are rebuilt too, from their own topics.

It folds the topics the live projection folds — read from the projection itself (its build
record, else the offsets stored with it), so after a reindex it folds the new log — and refuses
KAFKA_TOPIC, SCREEN_TOPIC or CATALOGUE_TOPIC naming others (one line, exit 2). The variables name
the topics only where the live projection has folded none yet; --topic names the vault topic.

After the switch, projectors run with FOLLOW_LIVE=true (npm start's, docker compose's) move to
the new schema by themselves: they resume from the offsets stored there, under the build's group,
from the build's topic (after reindex, its new one). Point a pinned one at it (the command prints
the variables): it resumes from the offsets stored there. Until then the new schema is only as
fresh as the switch, unless --follow keeps this process folding into it.

The roles that read the views before the switch (select on them) can read the new views and
schema, and the roles that write the live schema can write the new one, READER_ROLE and
WRITER_ROLE set or not: the command prints whom it granted.

options:
  --schema NAME      schema to build (default: the unfinished build, else vault_yield_<timestamp>)
  --group NAME       consumer group of the build (default: vault-yield-rebuild-<timestamp>)
  --topic NAME       vault topic to fold (default: the live projection's, else $KAFKA_TOPIC)
  --dry-run          build (and finalize) but do not switch
  --follow           after the switch, keep folding new records until SIGINT/SIGTERM
  --retire-old       after the switch, drop retired schemas older than the grace period (as
                     \`retire\` does: the schema just switched away from stays while its projector
                     still writes to it)
  --grace DURATION   grace period for retiring (default ${DEFAULT_GRACE}; e.g. 30m, 24h, 7d)
  --quiet-for DURATION
                     whatever the grace, never drop a schema a projector wrote to (its stored
                     offsets moved) less than this long ago, e.g. the old projector not stopped
                     yet after the switch (default ${DEFAULT_QUIET}; 0 turns this check off, a
                     schema an open transaction is using is still left in place)
  --no-market        do not fold the screen / catalogue topics
  --unlogged         build unlogged tables, SET LOGGED once caught up: less WAL while folding, but
                     the rewrite at the end costs more than it saves (1M records here: 119 s
                     end to end unlogged, 102 s logged); a Postgres crash mid-build empties them
  --all-indexes      keep the secondary indexes while folding (no index build at the end)

subcommands:
  switch --schema NAME   point the views at NAME now (bootstrap, or roll back to a retired schema)
  retire                 drop schemas no longer live, past the grace period. Left in place, and
                         said so (with how long ago it was last written): a schema written within
                         --quiet-for, or one an open transaction is using (busy: the drop gives up
                         after 5 s of lock waiting instead of queueing the projector). --dry-run
                         reports the same decisions and drops nothing
  list                   the builds recorded in the views schema

environment:
  DATABASE_URL, KAFKA_BROKERS (required); KAFKA_TOPIC (the live projection's, else vault-records); VIEWS_SCHEMA
  (vault_yield_api: the reader's PROJECTION_SCHEMA); READER_ROLE (granted select on the views and
  the new schema, besides the roles that read the views already); WRITER_ROLE (granted DML on the
  new schema, besides the roles that write the live one); SCREEN_TOPIC, CATALOGUE_TOPIC; MIN_DAILY_RETURNS; PROJECTOR_CONCURRENCY (2);
  PROJECTOR_MAX_BATCH_BYTES (8 MiB); PG_POOL_MAX (6); LOG_LEVEL (warn)`,
  run: (argv, context) => rebuild(argv, context),
};

/**
 * `vault-yield rebuild` with the purpose recorded for the build: `reindex` runs it on the topic it
 * has just rebuilt, so the build is listed (and resumed) as a reindex, with the checkpoint namespace
 * that cut the topic (`indexerSchema`: indexers following the live log resume from it).
 */
export async function rebuild(
  argv: string[],
  context: () => CliContext<OpsEnv>,
  purpose: 'rebuild' | 'reindex' = 'rebuild',
  indexerSchema?: string,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      schema: { type: 'string' },
      group: { type: 'string' },
      topic: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      follow: { type: 'boolean', default: false },
      'retire-old': { type: 'boolean', default: false },
      grace: { type: 'string', default: DEFAULT_GRACE },
      'quiet-for': { type: 'string', default: DEFAULT_QUIET },
      'no-market': { type: 'boolean', default: false },
      unlogged: { type: 'boolean', default: false },
      'all-indexes': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const sub = positionals[0];
  if (positionals.length > 1 || (sub && !['switch', 'retire', 'list'].includes(sub))) {
    console.error('usage: vault-yield rebuild [switch|retire|list] [options] (see --help)');
    return 2;
  }
  const ctx = context();
  const env = ctx.config;
  // Under a reindex, the rebuild's lines are a component of the reindex's.
  const log = ctx.service === 'rebuild' ? ctx.log : ctx.log.child({ component: 'rebuild' });
  const views = env.VIEWS_SCHEMA;
  const graceMs = parseDuration(values.grace);
  const quietMs = parseDuration(values['quiet-for']);
  const schemaArg =
    values.schema === undefined ? undefined : optionValue('schema', envField.identifier(), values.schema);

  // Builds, switches and retires create, replace and drop schemas and views: the migrator's URL.
  const pool = createPgPool({ url: ddlUrl(env), applicationName: 'vault-yield-rebuild', max: 2 });
  const retire = async (dryRun: boolean) => {
    const decisions = await retireSchemas(pool, { viewsSchema: views, graceMs, quietMs, dryRun });
    printRetire(decisions);
  };
  try {
    if (sub === 'switch') {
      if (!schemaArg) {
        console.error('usage: vault-yield rebuild switch --schema NAME');
        return 2;
      }
      const r = await switchLive(pool, {
        viewsSchema: views,
        target: schemaArg,
        readerRole: env.READER_ROLE,
        ...(env.WRITER_ROLE ? { writerRole: env.WRITER_ROLE } : {}),
      });
      console.log(
        `switched ${views} → ${r.target}${r.previous ? ` (was ${r.previous})` : ''}: ${r.views.length} views`,
      );
      console.log(grantsLine(r));
      return 0;
    }
    if (sub === 'retire') {
      await retire(values['dry-run']);
      return 0;
    }
    if (sub === 'list') {
      const builds = await listBuilds(pool, views);
      const live = await liveSchema(pool, views);
      if (values.json) console.log(JSON.stringify({ viewsSchema: views, live, builds }, null, 2));
      else printBuilds(builds, live);
      return 0;
    }

    // The build folds what the live projection folds — its vault topic and its market topics, read
    // from the projection itself (its build record, else its stored offsets) — unless --topic names
    // the vault topic (reindex's new log); an environment naming other topics is refused: a
    // rebuild after a reindex must never fold the old log back in because KAFKA_TOPIC still names it.
    const live = (await liveSchema(pool, views)) ?? env.PROJECTION_SCHEMA;
    const sources: LiveSources = (await schemaExists(pool, live))
      ? await liveSources(pool, views, live)
      : { vault: null, screen: null, catalogue: null };
    refuseOtherTopics(
      'rebuild',
      live,
      sources,
      namedTopics(ctx),
      values.topic ? ['screen', 'catalogue'] : undefined,
    );
    const topic = values.topic ?? sources.vault?.topic ?? env.KAFKA_TOPIC;
    const buildEnv = {
      ...env,
      SCREEN_TOPIC: sources.screen?.topic ?? env.SCREEN_TOPIC,
      CATALOGUE_TOPIC: sources.catalogue?.topic ?? env.CATALOGUE_TOPIC,
    };

    // The build: resume the unfinished one unless told otherwise.
    const builds = await listBuilds(pool, views);
    const unfinished = builds
      .filter(
        (b) =>
          (b.purpose === 'rebuild' || b.purpose === 'reindex') &&
          (b.state === 'building' || b.state === 'ready') &&
          b.topic === topic,
      )
      .at(-1);
    const known = schemaArg ? builds.find((b) => b.schema === schemaArg) : unfinished;
    const suffix = stamp();
    const schema = schemaArg ?? known?.schema ?? `vault_yield_${suffix}`;
    const group = values.group ?? known?.groupId ?? `vault-yield-${purpose}-${suffix}`;
    if (known && !schemaArg)
      process.stderr.write(`resuming build ${known.schema} (group ${known.groupId})\n`);

    // A new log cut by a reindex (its checkpoint namespace known) is built only once every chain
    // the live deployment follows was cut into it: one left out would drop out at the switch.
    const namespace = indexerSchema ?? (known?.purpose === 'reindex' ? known.indexerSchema : null);
    if (namespace) {
      const liveIdx = await liveIndexer(pool, ctx, views, env.PROJECTION_SCHEMA);
      if (liveIdx.schema !== namespace) {
        const cuts = await chainCuts(pool, liveIdx.schema, sources.vault?.topic ?? liveIdx.topic, namespace);
        for (const line of cutLines(cuts, topic)) process.stderr.write(`${line}\n`);
        requireEveryChainCut(cuts, topic, namespace);
      }
    }

    const handle = await runBuild({
      env: buildEnv,
      ctx,
      schema,
      groupId: group,
      topic,
      purpose: known?.purpose === 'reindex' ? 'reindex' : purpose,
      indexerSchema,
      strategy: !values['no-market'],
      unlogged: values.unlogged,
      deferIndexes: !values['all-indexes'],
      finalize: true,
      log,
    });
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await handle.stop();
    };
    try {
      const rate = handle.foldSeconds > 0 ? handle.applied / handle.foldSeconds : 0;
      console.log(
        `built ${schema} (group ${group}): ${handle.applied} records of ${topic}, ${Math.round(rate)} records/s while folding`,
      );
      if (values['dry-run']) {
        console.log(
          `dry run: not switched. Switch later with: vault-yield rebuild switch --schema ${schema}`,
        );
        return 0;
      }
      const r = await switchLive(pool, {
        viewsSchema: views,
        target: schema,
        readerRole: env.READER_ROLE,
        ...(env.WRITER_ROLE ? { writerRole: env.WRITER_ROLE } : {}),
      });
      console.log(`switched ${views} → ${schema}${r.previous ? ` (was ${r.previous})` : ''}`);
      console.log(grantsLine(r));
      console.log(
        `next: projectors with FOLLOW_LIVE=true (npm start's, docker compose's) move to ${schema} by themselves, folding ${topic} under group ${group} from the offsets stored there; a pinned one: run it with PROJECTION_SCHEMA=${schema} CONSUMER_GROUP=${group} KAFKA_TOPIC=${topic} (it resumes from the offsets stored in ${schema}), then stop the one writing to ${r.previous ?? 'the old schema'}`,
      );
      if (values['retire-old']) await retire(false);
      if (values.follow) {
        process.stderr.write(`following ${topic} into ${schema}; SIGINT/SIGTERM stops\n`);
        await new Promise<void>((resolve) => {
          ctx.shutdown(async () => {
            await stop();
            resolve();
          });
        });
      }
      return 0;
    } finally {
      await stop();
    }
  } finally {
    await pool.end();
  }
}

/** Who can read and write through the switch: the roles it granted, or that none reads the views. */
function grantsLine(r: SwitchResult): string {
  const readers = r.readers.length
    ? `readers ${r.readers.join(', ')} (select on the views and ${r.target})`
    : 'no role reads the views (READER_ROLE grants one)';
  const writers = r.writers.length ? `; writers ${r.writers.join(', ')} (DML on ${r.target})` : '';
  return `granted: ${readers}${writers}`;
}

function printRetire(decisions: RetireDecision[]): void {
  if (decisions.length === 0) console.log('retire: no builds recorded');
  for (const d of decisions) console.log(`retire: ${d.schema}: ${d.action} (${d.reason})`);
}

function printBuilds(builds: BuildRecord[], live: string | null): void {
  console.log(`live: ${live ?? '(never switched)'}`);
  for (const b of builds) {
    const when = (d: Date | null) => (d ? d.toISOString() : '-');
    console.log(
      `${b.schema.padEnd(32)} ${b.purpose.padEnd(8)} ${b.state.padEnd(9)} group=${b.groupId || '-'} topic=${b.topic || '-'} started=${when(b.startedAt)} caught_up=${when(b.caughtUpAt)} switched=${when(b.switchedAt)} retired=${when(b.retiredAt)}`,
    );
  }
}
