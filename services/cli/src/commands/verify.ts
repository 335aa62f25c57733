import { parseArgs } from 'node:util';
import { envField, type Logger } from '@vault-yield/common';
import { FOLD_VERSION } from '@vault-yield/domain';
import {
  compareSchemas,
  createPgPool,
  dropProjectionSchema,
  liveSchema,
  markBuild,
  type Pool,
  type PoolClient,
  projectionFoldVersion,
  STATS_REFRESHED_TABLES,
  STRATEGY_FIGURES,
  schemaExists,
  storedOffsetRows,
  type TableDiff,
  withSnapshot,
} from '@vault-yield/store';
import type { Command } from '../command.js';
import { buildEnvSchema, type OpsEnv } from '../config.js';
import type { CliContext } from '../context.js';
import { type BuildHandle, runBuild } from '../ops/build.js';
import { ddlUrl, optionValue, parseDuration, stamp, usageError } from '../ops/env.js';
import { liveSources, namedTopics, refuseOtherTopics } from '../ops/live-topics.js';
import { refreshStrategyStats, strategyGroups } from '../ops/strategy.js';

export const verifyCommand: Command<typeof buildEnvSchema> = {
  env: buildEnvSchema,
  log: { name: 'verify', format: true },
  help: `usage: vault-yield verify [--live NAME] [--schema NAME] [--keep] [--timeout DURATION] [--json]
                        [--no-market] [--chain N]

Folds the event log from offset 0 into a scratch schema (its own consumer group, unlogged, no
secondary indexes) from the topics the live projection folds (its build record, else the topics
its stored offsets name; KAFKA_TOPIC / SCREEN_TOPIC / CATALOGUE_TOPIC naming others is refused
in one line, exit 2), waits until the scratch and the live projection have applied exactly the
same offsets, then compares them table by table inside one snapshot: row counts and a hash of
every row over the compared columns; differing rows are sampled. Exit 0 when equal, 1 on any
difference, 3 when the two never stood at the same offsets within --timeout (log still moving);
a failure is one line, exit 1. The scratch schema is created, read and dropped as the migrator
(MIGRATE_DATABASE_URL, else DATABASE_URL), and dropped on every exit, SIGINT/SIGTERM included,
unless --keep.

Not compared: consumer_offsets (group names differ; the offsets are compared first instead),
indexer_* tables, wall-clock columns the projection writes itself (updated_at of strategies,
screen_meta and catalogue_meta; created_at and id of dead_letters; applied_at of
schema_migrations). vault_snapshot.updated_at is block time: compared. The strategies'
live_apr/sigma/history_days are compared too (functions of the log: equity points and each
vault's fold extent): the scratch's are refreshed from its own tables at the offsets compared; the
live projector refreshes its own (and the daily rollups behind them) every STATS_INTERVAL_MS, so
when they alone differ verify waits within --timeout for the live refresh before it reports them
(exit 1, with that said).
A live projection folded by an older fold version (fold_meta) differs by design: verify says so
and names the cure (\`vault-yield rebuild\`).

options:
  --live NAME         schema to check (default: the views schema's target, else $PROJECTION_SCHEMA)
  --schema NAME       scratch schema name (default vault_yield_verify_<timestamp>)
  --keep              keep the scratch schema (default: dropped at the end)
  --timeout DURATION  how long to wait for equal offsets once caught up (default 60s)
  --json              machine-readable result on stdout
  --no-market         do not fold or compare the screen / catalogue tables
  --chain N           compare only chain N's rows, in the tables keyed by chain (the strategy
                      tables, which gather every chain, are left out); the scratch still folds the
                      whole log (one topic holds every chain)

environment: as for rebuild (MIGRATE_DATABASE_URL, DATABASE_URL, KAFKA_BROKERS, VIEWS_SCHEMA, …);
  the topic variables may stay unset (the live projection's are taken)`,
  async run(argv, context) {
    const { values } = parseArgs({
      args: argv,
      options: {
        live: { type: 'string' },
        schema: { type: 'string' },
        keep: { type: 'boolean', default: false },
        timeout: { type: 'string', default: '60s' },
        json: { type: 'boolean', default: false },
        'no-market': { type: 'boolean', default: false },
        chain: { type: 'string' },
      },
    });
    const ctx = context();
    const { config: env, log } = ctx;
    const timeoutMs = parseDuration(values.timeout);
    if (values.chain !== undefined && !/^[1-9]\d{0,15}$/.test(values.chain))
      throw usageError(`--chain must be a positive integer (a chain id), got ${values.chain}`);
    const chainId = values.chain === undefined ? undefined : Number(values.chain);
    const suffix = stamp();
    const scratch = values.schema
      ? optionValue('schema', envField.identifier(), values.schema)
      : `vault_yield_verify_${suffix}`;
    // One role creates, reads and drops the scratch schema: the migrator's, as runBuild creates it
    // (dropped as the writer, it outlived the run: "must be owner of schema").
    const pool = createPgPool({ url: ddlUrl(env), applicationName: 'vault-yield-verify', max: 2 });
    const run: Run = {
      ctx,
      pool,
      env,
      log,
      scratch,
      group: `vault-yield-verify-${suffix}`,
      handle: null,
      owned: false,
    };
    let cleaned: Promise<void> | null = null;
    const cleanup = () => {
      cleaned ??= cleanUp(run, values.keep);
      return cleaned;
    };
    // Interrupted, it still stops its fold and drops its scratch schema before exiting.
    const onSignal = (signal: NodeJS.Signals) => {
      process.stderr.write(
        `verify: ${signal}: stopping${run.owned && !values.keep ? `, dropping ${scratch}` : ''}\n`,
      );
      void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      return await verify(run, { ...values, timeoutMs, chainId });
    } catch (err) {
      if (err instanceof TypeError && 'code' in err) throw err;
      console.error(
        `verify: ${oneLine(err)}${run.owned && !values.keep ? ` (scratch ${scratch} dropped)` : ''}`,
      );
      return 1;
    } finally {
      await cleanup();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};

/** One verify run: its admin pool (the migrator's), its scratch schema and group, its fold. */
interface Run {
  ctx: CliContext<OpsEnv>;
  pool: Pool;
  env: OpsEnv;
  log: Logger;
  scratch: string;
  group: string;
  handle: BuildHandle | null;
  /** True once the scratch schema is known to be this run's (it did not exist before). */
  owned: boolean;
}

interface VerifyOptions {
  live?: string | undefined;
  json: boolean;
  'no-market': boolean;
  timeout: string;
  timeoutMs: number;
  /** --chain: compare only this chain's rows. */
  chainId: number | undefined;
}

const oneLine = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'unknown error';

/** Stops the fold, then drops the scratch schema (unless --keep) as the role that created it. */
async function cleanUp(run: Run, keep: boolean): Promise<void> {
  if (run.handle) await run.handle.stop().catch(() => {});
  run.handle = null;
  if (run.owned && !keep) {
    try {
      await dropProjectionSchema(run.pool, run.scratch);
      await markBuild(run.pool, run.env.VIEWS_SCHEMA, run.scratch, { state: 'dropped', dropped: true });
    } catch (err) {
      console.error(
        `verify: the scratch schema ${run.scratch} could not be dropped (${oneLine(err)}): drop it by hand (drop schema ${run.scratch} cascade)`,
      );
    }
  }
  await run.pool.end().catch(() => {});
}

/**
 * The topics to fold: those the live projection folds, from its build record or stored offsets
 * (an environment naming others is refused); the environment's only where the live projection
 * has no offsets of that kind.
 */
async function topicsOf(run: Run, live: string, noMarket: boolean) {
  const { env } = run;
  const sources = await liveSources(run.pool, env.VIEWS_SCHEMA, live);
  refuseOtherTopics('verify', live, sources, namedTopics(run.ctx), noMarket ? ['vault'] : undefined);
  return {
    vault: sources.vault ?? { topic: env.KAFKA_TOPIC, group: env.CONSUMER_GROUP },
    screen: sources.screen ?? { topic: env.SCREEN_TOPIC, group: '' },
    catalogue: sources.catalogue ?? { topic: env.CATALOGUE_TOPIC, group: '' },
    /** The live projection folds the market side: so does the scratch (else neither). */
    market: !noMarket && (sources.screen !== null || sources.catalogue !== null),
  };
}

async function verify(run: Run, values: VerifyOptions): Promise<number> {
  const { pool, env, scratch, group } = run;
  const views = env.VIEWS_SCHEMA;
  const live = values.live
    ? optionValue('live', envField.identifier(), values.live)
    : ((await liveSchema(pool, views)) ?? env.PROJECTION_SCHEMA);
  if (!(await schemaExists(pool, live))) {
    console.error(`verify: live schema ${live} does not exist`);
    return 2;
  }
  const topics = await topicsOf(run, live, values['no-market']);
  if (await schemaExists(pool, scratch))
    throw usageError(
      `schema ${scratch} already exists: verify folds into a new schema (pick another --schema)`,
    );
  run.owned = true;
  const handle = await runBuild({
    env: { ...env, SCREEN_TOPIC: topics.screen.topic, CATALOGUE_TOPIC: topics.catalogue.topic },
    ctx: run.ctx,
    schema: scratch,
    groupId: group,
    topic: topics.vault.topic,
    purpose: 'verify',
    strategy: topics.market,
    unlogged: true,
    deferIndexes: true,
    finalize: false,
    log: run.log,
    quiet: values.json,
    label: `verify ${scratch}`,
  });
  run.handle = handle;
  const liveMain = topics.vault.group;
  const pairs = [{ topic: topics.vault.topic, live: liveMain, scratch: group }];
  const market = handle.record.market;
  if (market) {
    const g = strategyGroups(group);
    pairs.push(
      { topic: market.screenTopic, live: topics.screen.group, scratch: g.screen },
      { topic: market.catalogueTopic, live: topics.catalogue.group, scratch: g.catalogue },
    );
  }
  const offsetsOf = async (db: PoolClient, schema: string, groupId: string, t: string) => {
    const m = new Map<number, bigint>();
    for (const r of await storedOffsetRows(db, schema, { groupId, topic: t })) {
      const n = BigInt(r.nextOffset);
      if (n > 0n) m.set(r.partition, n);
    }
    return m;
  };
  const sameOffsets = async (db: PoolClient) => {
    const mismatches: string[] = [];
    for (const p of pairs) {
      const a = await offsetsOf(db, live, p.live, p.topic);
      const b = await offsetsOf(db, scratch, p.scratch, p.topic);
      for (const part of new Set([...a.keys(), ...b.keys()])) {
        if ((a.get(part) ?? 0n) !== (b.get(part) ?? 0n))
          mismatches.push(`${p.topic}[${part}] live ${a.get(part) ?? 0n} scratch ${b.get(part) ?? 0n}`);
      }
    }
    return mismatches;
  };

  /**
   * The scratch's offsets, as one string: its strategy figures (live_apr, sigma, history_days) are
   * refreshed from its own tables whenever they moved, as the live projector refreshes its own.
   */
  const scratchAt = async (db: Pick<Pool, 'query'>) => {
    const parts: string[] = [];
    for (const p of pairs)
      for (const r of await storedOffsetRows(db, scratch, { groupId: p.scratch, topic: p.topic }))
        parts.push(`${p.topic}[${r.partition}]=${r.nextOffset}`);
    return parts.sort().join(',');
  };
  let figuresAt: string | null = null;
  /** Differences only in the strategy figures, which the live projector refreshes on a timer. */
  let figuresOnly = false;

  const deadline = Date.now() + values.timeoutMs;
  let diffs: TableDiff[] | null = null;
  let mismatches: string[] = [];
  for (;;) {
    if (market) {
      const at = await scratchAt(pool);
      if (at !== figuresAt) {
        await refreshStrategyStats(handle.schemaPool, env.MIN_DAILY_RETURNS, run.log);
        figuresAt = at;
      }
    }
    const result = await withSnapshot(pool, async (db) => {
      const m = await sameOffsets(db);
      // The scratch folded more since its figures were refreshed: refresh, then compare.
      if (m.length === 0 && market && (await scratchAt(db)) !== figuresAt)
        m.push(`${scratch}: strategy figures being refreshed`);
      if (m.length > 0) return { m, d: null, figuresOnly: false };
      const d = await compareSchemas(db, live, scratch, { chainId: values.chainId });
      const bad = d.filter((x) => !x.equal);
      // What the stats refresh writes alone differs (the strategies' figures, the daily rollups):
      // the live projection's may be one refresh behind its fold.
      const refreshedOnly = bad.every(
        (x) => x.table === 'strategies' || STATS_REFRESHED_TABLES.includes(x.table),
      );
      const only =
        bad.length > 0 &&
        refreshedOnly &&
        (!bad.some((x) => x.table === 'strategies') ||
          (
            await compareSchemas(db, live, scratch, {
              chainId: values.chainId,
              tables: ['strategies'],
              exclude: { strategies: STRATEGY_FIGURES },
            })
          )[0]!.equal);
      return { m, d, figuresOnly: only };
    });
    mismatches = result.m;
    diffs = result.d;
    figuresOnly = result.figuresOnly;
    // Live figures that differ may be a refresh behind: wait for it within --timeout.
    if ((diffs && !figuresOnly) || Date.now() > deadline) break;
    await handle.catchUp();
    await new Promise((r) => setTimeout(r, diffs ? 1_000 : 300));
  }

  if (!diffs) {
    const msg = `verify: ${live} and the scratch fold never stood at the same offsets within ${values.timeout}: ${mismatches.slice(0, 5).join('; ')}`;
    if (values.json) console.log(JSON.stringify({ live, scratch, comparable: false, mismatches }, null, 2));
    else console.error(msg);
    return 3;
  }
  const bad = diffs.filter((d) => !d.equal);
  // A live projection folded by an older fold differs by design: say so, with the cure.
  const liveFold = await projectionFoldVersion(pool, live);
  const foldNote =
    liveFold === FOLD_VERSION
      ? null
      : `verify: ${live} holds figures of fold version ${liveFold ?? '(not recorded)'}, this build folds version ${FOLD_VERSION}: they differ by design where a vault had several records in one block — run \`vault-yield rebuild\``;
  if (values.json) {
    console.log(
      JSON.stringify(
        {
          live,
          scratch,
          group,
          liveGroup: liveMain,
          topics: pairs.map((p) => p.topic),
          comparable: true,
          chainId: values.chainId ?? null,
          equal: bad.length === 0,
          foldVersion: { live: liveFold, build: FOLD_VERSION },
          /** Only the strategies' figures / daily rollups differ (waited on within --timeout). */
          strategyFiguresOnly: figuresOnly,
          tables: diffs,
        },
        null,
        2,
      ),
    );
  } else {
    console.log(
      `verify: live ${live} (group ${liveMain}) vs scratch ${scratch} (group ${group}), folding ${pairs.map((p) => p.topic).join(', ')}${values.chainId === undefined ? '' : `; comparing chain ${values.chainId}'s rows only`}`,
    );
    for (const d of diffs) printDiff(d);
    console.log(
      bad.length === 0
        ? `verify: no difference in ${diffs.length} tables`
        : `verify: ${bad.length} of ${diffs.length} tables differ: ${bad.map((d) => d.table).join(', ')}`,
    );
    if (foldNote) console.log(foldNote);
    if (figuresOnly)
      console.log(
        `verify: only the strategies' ${STRATEGY_FIGURES.join(' / ')} (and the daily rollups behind them) differ — functions of the log, which the live projector refreshes every STATS_INTERVAL_MS, not in the fold's transaction: a live projection folded less than one refresh ago may still hold the figures before it (verify again after one refresh, or give --timeout beyond it); otherwise the live figures are not the log's`,
      );
  }
  return bad.length === 0 ? 0 : 1;
}

function printDiff(d: TableDiff): void {
  const side = (c: TableDiff['left']) => (c ? `${c.rows} rows, hash ${c.hash.slice(0, 12)}` : 'missing');
  if (d.equal) {
    console.log(`  ok    ${d.table.padEnd(18)} ${side(d.left)}`);
    return;
  }
  console.log(`  DIFF  ${d.table.padEnd(18)} live: ${side(d.left)}; scratch: ${side(d.right)}`);
  if (d.columnsOnlyLeft.length) console.log(`        columns only in live: ${d.columnsOnlyLeft.join(', ')}`);
  if (d.columnsOnlyRight.length)
    console.log(`        columns only in scratch: ${d.columnsOnlyRight.join(', ')}`);
  for (const r of d.onlyLeft) console.log(`        - live only:    ${r}`);
  for (const r of d.onlyRight) console.log(`        + scratch only: ${r}`);
}
