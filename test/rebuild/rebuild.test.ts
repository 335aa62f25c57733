import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@vault-yield/common';
import { FOLD_VERSION, type VaultRecord } from '@vault-yield/domain';
import { createLogAdmin, createPublisher } from '@vault-yield/log';
import type { Projector } from '@vault-yield/projector';
import { createStrategyProjector, type StrategyProjector } from '@vault-yield/projector';
import type { Reader } from '@vault-yield/reader';
import { createPgPool, liveSchema, type Pool, schemaChecksums, storedOffsetRows } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { startReader } from '@vault-yield/test-kit/reader';
import { makeCatalogue, makeScreen } from '@vault-yield/test-kit/screen';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli/run.js';
import { createTopic, projector, publish } from '../projector/support.js';

/**
 * The operator commands against a real Kafka and Postgres: a live projector and an in-process
 * reader (through the views schema, read-only role) keep serving while `vault-yield rebuild`
 * folds the log into a new schema and switches; `verify` finds no difference, then a planted
 * one; a rebuild SIGKILLed mid-way and re-run ends equal to an uninterrupted one.
 */
const VIEWS = 'vault_yield_api';
const bin = fileURLToPath(new URL('../../services/cli/bin/vault-yield.js', import.meta.url));

describe('vault-yield rebuild / verify', () => {
  let db: TestDatabase;
  let pool: Pool;
  let live: Projector;
  let market: StrategyProjector;
  let marketPool: Pool;
  let reader: Reader;
  let baseUrl: string;
  const topic = uniqueTopic('vault-records');
  const screenTopic = uniqueTopic('screen');
  const catalogueTopic = uniqueTopic('catalogue');
  const gen = createHistoryGenerator({ vaults: 40, seed: 11 });
  /** Every record published to the topic (for the ledger count: marks have no rows). */
  const published: VaultRecord[] = [];
  const more = createHistoryGenerator({ vaults: 10, seed: 12 });
  let env: Record<string, string>;
  const log = createLogger({ name: 'rebuild-test', level: 'silent' });

  beforeAll(async () => {
    db = await createTestDatabase('rebuild');
    pool = createPgPool({ url: db.writerUrl, applicationName: 'rebuild-test', max: 2 });
    const brokers = kafkaBrokers();
    await createTopic(brokers, topic, 4);
    const admin = await createLogAdmin({ brokers, clientId: 'rebuild-test' });
    await admin.ensureTopic({ topic: screenTopic, partitions: 1 });
    await admin.ensureTopic({ topic: catalogueTopic, partitions: 1 });
    await admin.close();
    for (const [t, key, value] of [
      [catalogueTopic, 'catalogue', makeCatalogue(1_000)],
      [screenTopic, 'screen', makeScreen('s1', 2_000)],
    ] as const) {
      const p = await createPublisher({ brokers, clientId: 'rebuild-test', topic: t });
      await p.publishRaw([{ key, value: Buffer.from(JSON.stringify(value)) }]);
      await p.close();
    }
    published.push(...gen.take(3_000));
    await publish(brokers, topic, published);

    live = projector({ brokers, url: db.writerUrl, schema: db.schema, topic, group: 'live' });
    await live.start();
    marketPool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'market', max: 2 });
    market = createStrategyProjector({
      brokers,
      pool: marketPool,
      logger: log,
      screenTopic,
      catalogueTopic,
      groupId: 'live-market',
      statsIntervalMs: 0,
      minDailyReturns: 30,
    });
    await market.start();
    await live.caughtUp({ timeoutMs: 60_000 });

    env = cliEnv(
      db,
      { topic, views: VIEWS },
      {
        SCREEN_TOPIC: screenTopic,
        CATALOGUE_TOPIC: catalogueTopic,
      },
    );
    // Bootstrap: the reader reads through the views schema, pointed at the initial schema.
    const sw = await runCli(['rebuild', 'switch', '--schema', db.schema], env);
    expect(sw.stderr).toBe('');
    expect(sw.code).toBe(0);
    // Market rows are folded asynchronously: wait for them before anything is compared.
    const deadline = Date.now() + 30_000;
    while ((await pool.query(`select 1 from ${db.schema}.strategies`)).rowCount === 0) {
      if (Date.now() > deadline) throw new Error('strategy tables never filled');
      await new Promise((r) => setTimeout(r, 200));
    }
    await market.refreshStats();

    ({ reader, url: baseUrl } = await startReader(db, { schema: VIEWS }));
  }, 180_000);

  afterAll(async () => {
    await reader?.stop();
    await market?.stop();
    await live?.stop();
    await marketPool?.end();
    await pool?.end();
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'rebuild-test' });
    for (const t of [topic, screenTopic, catalogueTopic]) await admin.deleteTopic(t).catch(() => {});
    await admin.close();
    await db?.drop();
  });

  it('rebuilds under steady reader load with zero failed requests, then serves the new schema', async () => {
    const vault = gen.vaults()[3]!.vault.toLowerCase();
    // Plant a marker in the old schema only: the reader shows it until the switch, never after.
    await pool.query(
      `update ${db.schema}.vault_snapshot set snapshot = (snapshot::jsonb || '{"planted": true}'::jsonb)::json where vault = $1`,
      [vault],
    );
    const get = (path: string) => fetch(`${baseUrl}${path}`);
    const before = (await (await get(`/v1/vault/${vault}/snapshot`)).json()) as Record<string, unknown>;
    expect(before.planted).toBe(true);

    const paths = [
      `/v1/vault/${vault}/snapshot`,
      `/v1/vault/${vault}/events`,
      `/v1/vault/${vault}/equity`,
      '/v1/vaults',
      '/v1/strategies',
      '/v1/universe',
      '/ready',
    ];
    let ok = 0;
    const failures: string[] = [];
    let running = true;
    const worker = async (w: number) => {
      for (let i = w; running; i++) {
        const path = paths[i % paths.length]!;
        try {
          const res = await get(path);
          await res.arrayBuffer();
          if (res.status === 200) ok++;
          else failures.push(`${path}: ${res.status}`);
        } catch (err) {
          failures.push(`${path}: ${(err as Error).message}`);
        }
      }
    };
    const load = [0, 1, 2, 3].map(worker);

    // New records arrive while the rebuild runs (other vaults: the planted one stays untouched).
    const publishing = (async () => {
      for (let i = 0; i < 5; i++) {
        const batch = more.take(100);
        published.push(...batch);
        await publish(kafkaBrokers(), topic, batch);
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    const res = await runCli(
      ['rebuild', '--schema', 'vault_yield_r1', '--group', 'rebuild-r1'],
      env,
      170_000,
    );
    await publishing;
    await new Promise((r) => setTimeout(r, 500));
    running = false;
    await Promise.all(load);

    expect(res.stderr).toMatch(/caught up at/);
    // Built logged by default: nothing to SET LOGGED at the end.
    expect(res.stderr).toMatch(/built \d+ indexes, logged 0 tables/);
    expect(res.stdout).toMatch(/switched vault_yield_api → vault_yield_r1 \(was vault_yield\)/);
    expect(res.stdout).toMatch(/PROJECTION_SCHEMA=vault_yield_r1 CONSUMER_GROUP=rebuild-r1/);
    expect(res.code).toBe(0);
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(50);
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_r1');
    const after = (await (await get(`/v1/vault/${vault}/snapshot`)).json()) as Record<string, unknown>;
    expect(after.planted).toBeUndefined();
    expect(after).toEqual({ ...before, planted: undefined });
    const ready = await get('/ready');
    expect(ready.status).toBe(200);
    // The new schema is logged, with its secondary indexes back.
    const { rows } = await pool.query<{ n: number }>(
      `select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'vault_yield_r1' and c.relpersistence = 'u'`,
    );
    expect(rows[0]!.n).toBe(0);
    const ix = await pool.query(
      `select 1 from pg_indexes where schemaname = 'vault_yield_r1' and indexname = 'ledger_vault_ts'`,
    );
    expect(ix.rowCount).toBe(1);
    // The live projector (old schema) caught up too: it applied exactly what the rebuild did.
    await live.caughtUp({ timeoutMs: 60_000 });
    const a = await storedOffsetRows(pool, db.schema, { groupId: 'live', topic });
    const b = await storedOffsetRows(pool, 'vault_yield_r1', { groupId: 'rebuild-r1', topic });
    expect(b.map((r) => [r.partition, r.nextOffset])).toEqual(a.map((r) => [r.partition, r.nextOffset]));
  }, 200_000);

  it('status reports the live schema, the lag per partition and the dead letters', async () => {
    const res = await runCli(['status', '--json'], env);
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout) as {
      liveSchema: string;
      projector: {
        group: string;
        topic: string;
        lag: number;
        partitions: { partition: number; lag: number }[];
      }[];
      deadLetters: unknown[];
      indexer: { chainHead: number | null };
      builds: { schema: string; state: string }[];
      fold: { projection: number | null; build: number };
    };
    expect(report.liveSchema).toBe('vault_yield_r1');
    const main = report.projector.find((p) => p.group === 'rebuild-r1' && p.topic === topic)!;
    expect(main.partitions.map((p) => p.partition)).toEqual([0, 1, 2, 3]);
    expect(main.lag).toBe(0);
    expect(report.indexer.chainHead).toBeNull();
    expect(report.builds.find((b) => b.schema === 'vault_yield_r1')?.state).toBe('live');
    expect(report.builds.find((b) => b.schema === db.schema)?.state).toBe('retired');
    const text = await runCli(['status'], env);
    expect(text.stdout).toMatch(/live schema +vault_yield_r1/);
    expect(text.stdout).toMatch(/partition +0 +stored/);
    // The rebuilt schema's figures are this build's fold; an older fold's are named, with the cure.
    expect(report.fold).toEqual({ projection: FOLD_VERSION, build: FOLD_VERSION });
    expect(text.stdout).toContain(`fold          version ${FOLD_VERSION} (this build's)`);
    await pool.query('update vault_yield_r1.fold_meta set fold_version = 1');
    try {
      const old = await runCli(['status'], env);
      expect(old.stdout).toContain(
        `fold          version 1; this build folds version ${FOLD_VERSION}: run \`vault-yield rebuild\``,
      );
    } finally {
      await pool.query('update vault_yield_r1.fold_meta set fold_version = $1', [FOLD_VERSION]);
    }
  });

  it('verify reports no difference after a normal run', async () => {
    const res = await runCli(['verify'], env, 170_000);
    expect(res.stdout).toMatch(/verify: no difference in \d+ tables/);
    expect(res.stdout).toMatch(/ok +vault_snapshot/);
    expect(res.stdout).toMatch(/ok +strategies/);
    expect(res.code).toBe(0);
    // The scratch schema is gone.
    const s = await pool.query(`select 1 from pg_namespace where nspname like 'vault_yield_verify_%'`);
    expect(s.rowCount).toBe(0);
  }, 180_000);

  it('verify reports a planted difference and exits non-zero', async () => {
    const vault = gen.vaults()[5]!.vault.toLowerCase();
    await pool.query(`update vault_yield_r1.vault_snapshot set status = 'tampered' where vault = $1`, [
      vault,
    ]);
    const res = await runCli(['verify', '--json'], env, 170_000);
    expect(res.code).toBe(1);
    const out = JSON.parse(res.stdout) as {
      equal: boolean;
      tables: { table: string; equal: boolean; onlyLeft: string[]; onlyRight: string[] }[];
    };
    expect(out.equal).toBe(false);
    const bad = out.tables.filter((t) => !t.equal);
    expect(bad.map((t) => t.table)).toEqual(['vault_snapshot']);
    expect(bad[0]!.onlyLeft.join('\n')).toContain('tampered');
    expect(bad[0]!.onlyRight.join('\n')).toContain(vault);
    await pool.query(
      `update vault_yield_r1.vault_snapshot v set status = o.status from ${db.schema}.vault_snapshot o
       where v.vault = $1 and o.vault = v.vault`,
      [vault],
    );
  }, 180_000);

  it('verify catches a tampered live_apr (the strategies’ figures are the log’s, compared)', async () => {
    const [row] = (
      await pool.query<{ id: string; live_apr: number | null; sigma: number | null }>(
        'select id, live_apr, sigma from vault_yield_r1.strategies order by id limit 1',
      )
    ).rows;
    expect(row).toBeDefined();
    const tampered = (row!.live_apr ?? 0) + 0.5;
    // live_apr and sigma are null together (a check): a strategy without figures gets both.
    await pool.query(
      'update vault_yield_r1.strategies set live_apr = $2, sigma = coalesce(sigma, 0.01) where id = $1',
      [row!.id, tampered],
    );
    try {
      // Short --timeout: a difference only in the figures is waited on (a live refresh may be due).
      const res = await runCli(['verify', '--json', '--timeout', '2s'], env, 170_000);
      expect(res.code).toBe(1);
      const out = JSON.parse(res.stdout) as {
        strategyFiguresOnly: boolean;
        tables: { table: string; equal: boolean; onlyLeft: string[] }[];
      };
      const bad = out.tables.filter((t) => !t.equal);
      expect(bad.map((t) => t.table)).toEqual(['strategies']);
      expect(bad[0]!.onlyLeft.join('\n')).toContain(String(tampered));
      expect(out.strategyFiguresOnly).toBe(true);
    } finally {
      await pool.query('update vault_yield_r1.strategies set live_apr = $2, sigma = $3 where id = $1', [
        row!.id,
        row!.live_apr,
        row!.sigma,
      ]);
    }
  }, 360_000);

  it('verify names a live projection of an older fold version as the cause, with the cure', async () => {
    await pool.query('update vault_yield_r1.fold_meta set fold_version = 1');
    try {
      const res = await runCli(['verify'], env, 170_000);
      expect(res.code).toBe(1);
      expect(res.stdout).toMatch(/DIFF +fold_meta/);
      expect(res.stdout).toContain(
        `verify: vault_yield_r1 holds figures of fold version 1, this build folds version ${FOLD_VERSION}`,
      );
      expect(res.stdout).toContain('run `vault-yield rebuild`');
    } finally {
      await pool.query('update vault_yield_r1.fold_meta set fold_version = $1', [FOLD_VERSION]);
    }
  }, 180_000);

  it('a rebuild SIGKILLed mid-way and re-run ends equal to an uninterrupted one', async () => {
    const smallBatches = { ...env, PROJECTOR_MAX_BATCH_BYTES: String(64 * 1024), PROJECTOR_CONCURRENCY: '1' };
    // Built --unlogged (SET LOGGED at the end), compared with a default (logged) build: same rows.
    const args = [
      'rebuild',
      '--dry-run',
      '--unlogged',
      '--schema',
      'vault_yield_killed',
      '--group',
      'rebuild-killed',
    ];
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...smallBatches },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const exited = new Promise((r) => child.on('exit', r));
    // Kill once some, not all, of the log is applied.
    const total = 3_000 + 500;
    let applied = 0;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const rows = await storedOffsetRows(pool, 'vault_yield_killed', {
        groupId: 'rebuild-killed',
        topic,
      }).catch(() => []);
      applied = rows.reduce((a, r) => a + Math.max(0, Number(r.nextOffset)), 0);
      if (applied > 0) break;
      if (Date.now() > deadline) throw new Error('the rebuild never started applying');
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await exited;
    expect(applied).toBeLessThan(total);

    const resumed = await runCli(args, smallBatches, 170_000);
    expect(resumed.stdout).toMatch(/built vault_yield_killed/);
    expect(resumed.stderr).toMatch(/built \d+ indexes, logged [1-9]\d* tables/);
    expect(resumed.code).toBe(0);
    const clean = await runCli(
      ['rebuild', '--dry-run', '--schema', 'vault_yield_clean', '--group', 'rebuild-clean'],
      env,
      170_000,
    );
    expect(clean.code).toBe(0);

    const killed = await schemaChecksums(pool, 'vault_yield_killed');
    const uninterrupted = await schemaChecksums(pool, 'vault_yield_clean');
    expect(Object.keys(killed).length).toBeGreaterThan(8);
    expect(killed).toEqual(uninterrupted);
    // Sequenced marks have no ledger rows.
    expect(killed.ledger!.rows).toBe(published.filter((r) => r.type !== 'mark').length);
    const offsets = async (schema: string, group: string) =>
      (await storedOffsetRows(pool, schema, { groupId: group, topic })).map((r) => [
        r.partition,
        r.nextOffset,
      ]);
    expect(await offsets('vault_yield_killed', 'rebuild-killed')).toEqual(
      await offsets('vault_yield_clean', 'rebuild-clean'),
    );
    // Dry runs never switch.
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_r1');
  }, 400_000);
});
