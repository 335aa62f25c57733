import { parseArgs } from 'node:util';
import { createConfig, envField } from '@vault-yield/common';
import { FOLD_VERSION } from '@vault-yield/domain';
import {
  compareSchemas,
  createPgPool,
  dropProjectionSchema,
  getBuild,
  liveSchema,
  markBuild,
  type PoolClient,
  projectionFoldVersion,
  schemaExists,
  storedOffsetRows,
  type TableDiff,
  withSnapshot,
} from '@vault-yield/store';
import type { Command } from '../command.js';
import { runBuild } from '../ops/build.js';
import { buildEnvSchema, cliLogger, optionValue, parseDuration, stamp } from '../ops/env.js';
import { strategyGroups } from '../ops/strategy.js';

export const verifyCommand: Command = {
  help: `usage: vault-yield verify [--live NAME] [--schema NAME] [--keep] [--timeout DURATION] [--json]
                        [--no-market]

Folds the event log from offset 0 into a scratch schema (its own consumer group, unlogged, no
secondary indexes), waits until the scratch and the live projection have applied exactly the
same offsets, then compares them table by table inside one snapshot: row counts and a hash of
every row over the compared columns; differing rows are sampled. Exit 0 when equal, 1 on any
difference, 3 when the two never stood at the same offsets within --timeout (log still moving).

Not compared: consumer_offsets (group names differ; the offsets are compared first instead),
indexer_* tables, wall-clock columns the projection writes itself (updated_at of strategies,
screen_meta and catalogue_meta; created_at and id of dead_letters; applied_at of
schema_migrations) and strategies.live_apr/sigma/history_days (refreshed on a timer from
equity_points, which are compared). vault_snapshot.updated_at is block time: compared.
A live projection folded by an older fold version (fold_meta) differs by design: verify says so
and names the cure (\`vault-yield rebuild\`).

options:
  --live NAME         schema to check (default: the views schema's target, else $PROJECTION_SCHEMA)
  --schema NAME       scratch schema name (default vault_yield_verify_<timestamp>)
  --keep              keep the scratch schema (default: dropped at the end)
  --timeout DURATION  how long to wait for equal offsets once caught up (default 60s)
  --json              machine-readable result on stdout
  --no-market         do not fold or compare the screen / catalogue tables

environment: as for rebuild (DATABASE_URL, KAFKA_BROKERS, KAFKA_TOPIC, VIEWS_SCHEMA, …)`,
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        live: { type: 'string' },
        schema: { type: 'string' },
        keep: { type: 'boolean', default: false },
        timeout: { type: 'string', default: '60s' },
        json: { type: 'boolean', default: false },
        'no-market': { type: 'boolean', default: false },
      },
    });
    const env = createConfig(buildEnvSchema);
    const log = cliLogger('verify', env.LOG_LEVEL, env.LOG_FORMAT);
    const views = env.VIEWS_SCHEMA;
    const timeoutMs = parseDuration(values.timeout);
    const pool = createPgPool({ url: env.DATABASE_URL, applicationName: 'vault-yield-verify', max: 2 });
    const suffix = stamp();
    const scratch = values.schema
      ? optionValue('schema', envField.identifier(), values.schema)
      : `vault_yield_verify_${suffix}`;
    const group = `vault-yield-verify-${suffix}`;
    let handle: Awaited<ReturnType<typeof runBuild>> | null = null;
    try {
      const live = values.live
        ? optionValue('live', envField.identifier(), values.live)
        : ((await liveSchema(pool, views)) ?? env.PROJECTION_SCHEMA);
      if (!(await schemaExists(pool, live))) {
        console.error(`verify: live schema ${live} does not exist`);
        return 2;
      }
      const topic = env.KAFKA_TOPIC;
      // The live projector's group: recorded with its build, else the one that wrote last.
      const liveBuild = await getBuild(pool, views, live);
      const liveGroupOf = async (t: string, recorded: string | undefined): Promise<string | null> => {
        if (recorded) return recorded;
        const rows = await storedOffsetRows(pool, live, { topic: t });
        rows.sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime());
        return rows[0]?.groupId ?? null;
      };
      const recorded = liveBuild?.groupId || undefined;
      const liveMain = (await liveGroupOf(topic, recorded)) ?? env.CONSUMER_GROUP;

      handle = await runBuild({
        env,
        schema: scratch,
        groupId: group,
        topic,
        purpose: 'verify',
        strategy: !values['no-market'],
        unlogged: true,
        deferIndexes: true,
        finalize: false,
        log,
        quiet: values.json,
        label: `verify ${scratch}`,
      });
      const market = handle.record.market;
      const pairs = [{ topic, live: liveMain, scratch: group }];
      if (market) {
        const g = strategyGroups(group);
        const lg = recorded ? strategyGroups(recorded) : null;
        pairs.push(
          {
            topic: market.screenTopic,
            live: (await liveGroupOf(market.screenTopic, lg?.screen)) ?? '',
            scratch: g.screen,
          },
          {
            topic: market.catalogueTopic,
            live: (await liveGroupOf(market.catalogueTopic, lg?.catalogue)) ?? '',
            scratch: g.catalogue,
          },
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

      const deadline = Date.now() + timeoutMs;
      let diffs: TableDiff[] | null = null;
      let mismatches: string[] = [];
      for (;;) {
        const result = await withSnapshot(pool, async (db) => {
          const m = await sameOffsets(db);
          return m.length > 0 ? { m, d: null } : { m, d: await compareSchemas(db, live, scratch) };
        });
        mismatches = result.m;
        diffs = result.d;
        if (diffs || Date.now() > deadline) break;
        await handle.catchUp();
        await new Promise((r) => setTimeout(r, 300));
      }

      if (!diffs) {
        const msg = `verify: ${live} and the scratch fold never stood at the same offsets within ${values.timeout}: ${mismatches.slice(0, 5).join('; ')}`;
        if (values.json)
          console.log(JSON.stringify({ live, scratch, comparable: false, mismatches }, null, 2));
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
              comparable: true,
              equal: bad.length === 0,
              foldVersion: { live: liveFold, build: FOLD_VERSION },
              tables: diffs,
            },
            null,
            2,
          ),
        );
      } else {
        console.log(`verify: live ${live} (group ${liveMain}) vs scratch ${scratch} (group ${group})`);
        for (const d of diffs) printDiff(d);
        console.log(
          bad.length === 0
            ? `verify: no difference in ${diffs.length} tables`
            : `verify: ${bad.length} of ${diffs.length} tables differ: ${bad.map((d) => d.table).join(', ')}`,
        );
        if (foldNote) console.log(foldNote);
      }
      return bad.length === 0 ? 0 : 1;
    } finally {
      if (handle) await handle.stop();
      if (!values.keep && (await schemaExists(pool, scratch).catch(() => false))) {
        await dropProjectionSchema(pool, scratch);
        await markBuild(pool, views, scratch, { state: 'dropped', dropped: true }).catch(() => {});
      }
      await pool.end();
    }
  },
};

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
