import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@vault-yield/common';
import { ROLES } from '@vault-yield/devstack/postgres';
import { createPublisher } from '@vault-yield/log';
import { createStrategyProjector, type Projector, type StrategyProjector } from '@vault-yield/projector';
import { createPgPool, type Pool } from '@vault-yield/store';
import {
  createTestDatabase,
  kafkaBrokers,
  postgresAdminUrl,
  type TestDatabase,
  uniqueTopic,
} from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { makeCatalogue, makeScreen } from '@vault-yield/test-kit/screen';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run.js';
import { createTopic, deleteTopics, projector, publish } from '../projector/support.js';

/**
 * `verify` as the operator runs it against the `npm start` stack (#48 item 3): the roles split as
 * deployed (the migrator owns the schemas, the writer has DML only), the live projection folding
 * topics under a prefix as dev's (`<prefix>-screen-results`, …) with the default groups, and the
 * README's environment only (KAFKA_TOPIC named, SCREEN_TOPIC / CATALOGUE_TOPIC unset). verify
 * folds the topics the live projection reads (its stored offsets name them), finds no
 * difference, and leaves no scratch schema behind — on success, on a refusal, on an error, on a
 * timeout and when interrupted mid-way.
 */
const VIEWS = 'vault_yield_api';
const bin = fileURLToPath(new URL('../../services/cli/bin/vault-yield.js', import.meta.url));
const log = createLogger({ name: 'verify-topics-test', level: 'silent' });

describe('verify folds what the live projection reads, and leaves nothing behind', () => {
  let db: TestDatabase;
  let pool: Pool;
  let marketPool: Pool;
  let live: Projector;
  let liveStopped = false;
  let market: StrategyProjector;
  const prefix = uniqueTopic('vdev');
  const topic = `${prefix}-vault-records`;
  const screenTopic = `${prefix}-screen-results`;
  const catalogueTopic = `${prefix}-strategy-catalogue`;
  const gen = createHistoryGenerator({ vaults: 12, seed: 48 });
  /** The README's environment for the running stack, and nothing else. */
  let env: Record<string, string>;

  const scratchSchemas = async () =>
    (
      await pool.query<{ s: string }>(
        `select nspname as s from pg_namespace where nspname like 'vault_yield_verify_%' order by 1`,
      )
    ).rows.map((r) => r.s);

  beforeAll(async () => {
    db = await createTestDatabase('verify_topics', { split: true });
    pool = createPgPool({ url: db.migratorUrl, applicationName: 'verify-topics-test', max: 2 });
    const brokers = kafkaBrokers();
    await createTopic(brokers, topic, 3);
    await createTopic(brokers, screenTopic, 1);
    await createTopic(brokers, catalogueTopic, 1);
    for (const [t, key, value] of [
      [catalogueTopic, 'catalogue', makeCatalogue(1_000)],
      [screenTopic, 'screen', makeScreen('s1', 2_000)],
    ] as const) {
      const p = await createPublisher({ brokers, clientId: 'verify-topics-test', topic: t });
      await p.publishRaw([{ key, value: Buffer.from(JSON.stringify(value)) }]);
      await p.close();
    }
    await publish(brokers, topic, gen.take(600));

    // The live side as `npm start` runs it: the writer role, the default groups.
    live = projector({
      brokers,
      url: db.writerUrl,
      schema: db.schema,
      topic,
      group: 'vault-yield-projector',
    });
    await live.start();
    marketPool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'market', max: 2 });
    market = createStrategyProjector({
      brokers,
      pool: marketPool,
      logger: log,
      screenTopic,
      catalogueTopic,
      groupId: 'vault-yield-market',
      statsIntervalMs: 0,
      minDailyReturns: 30,
    });
    await market.start();
    await live.caughtUp({ timeoutMs: 60_000 });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const n = await pool.query(`select 1 from ${db.schema}.strategies`);
      const m = await pool.query(`select 1 from ${db.schema}.screen_meta`);
      if ((n.rowCount ?? 0) > 0 && (m.rowCount ?? 0) > 0) break;
      if (Date.now() > deadline) throw new Error('the market side was never folded');
      await new Promise((r) => setTimeout(r, 200));
    }
    await market.refreshStats();

    env = {
      MIGRATE_DATABASE_URL: db.migratorUrl,
      DATABASE_URL: db.writerUrl,
      WRITER_ROLE: ROLES.writer,
      KAFKA_TOPIC: topic,
      KAFKA_BROKERS: brokers.join(','),
      // Unset (an empty value is unset): the defaults name other topics than the stack's.
      SCREEN_TOPIC: '',
      CATALOGUE_TOPIC: '',
      VIEWS_SCHEMA: '',
      PROJECTION_SCHEMA: '',
      CONSUMER_GROUP: '',
    };
    const sw = await runCli(['rebuild', 'switch', '--schema', db.schema], env);
    expect(sw.code, sw.stderr).toBe(0);
  }, 180_000);

  afterAll(async () => {
    await market?.stop();
    if (!liveStopped) await live?.stop();
    await marketPool?.end();
    await pool?.end();
    await deleteTopics();
    await db?.drop();
  });

  it('with the README environment: the live topics folded, no difference, no scratch schema left', async () => {
    const res = await runCli(['verify'], env, 170_000);
    expect(res.stderr).not.toMatch(/error|owner|DIFF/i);
    expect(res.stdout).toContain(`folding ${topic}, ${screenTopic}, ${catalogueTopic}`);
    expect(res.stdout).toMatch(/verify: no difference in \d+ tables/);
    expect(res.code).toBe(0);
    expect(await scratchSchemas()).toEqual([]);
  });

  it('an environment naming another topic is refused in one line naming the live one', async () => {
    const res = await runCli(['verify'], { ...env, SCREEN_TOPIC: 'screen-results' }, 60_000);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toContain(
      `SCREEN_TOPIC=screen-results, but the live projection ${db.schema} reads ${screenTopic}`,
    );
    expect(res.stdout).toBe('');
    expect(await scratchSchemas()).toEqual([]);
  });

  it('a run that fails mid-way says why in one line, exit 1, and leaves no scratch schema', async () => {
    // A table in the live schema the migrator may not read: the comparison fails once folded.
    const url = new URL(postgresAdminUrl());
    url.pathname = `/${db.database}`;
    const admin = createPgPool({ url: url.toString(), applicationName: 'verify-topics-admin', max: 1 });
    try {
      await admin.query(`create table ${db.schema}.zz_unreadable (x int)`);
      const res = await runCli(['verify'], env, 170_000);
      expect(res.code).toBe(1);
      const errors = res.stderr.split('\n').filter((l) => l.startsWith('verify: '));
      expect(errors).toEqual([
        expect.stringMatching(
          /^verify: permission denied .*zz_unreadable.* \(scratch vault_yield_verify_\d+ dropped\)$/,
        ),
      ]);
      expect(res.stderr).not.toMatch(/\n\s+at /);
      expect(await scratchSchemas()).toEqual([]);
    } finally {
      await admin.query(`drop table if exists ${db.schema}.zz_unreadable`);
      await admin.end();
    }
  });

  it('a run that times out or is interrupted mid-way leaves no scratch schema', async () => {
    // The live projector stops behind the log: the scratch gets ahead and never stands level.
    await live.stop();
    liveStopped = true;
    await publish(kafkaBrokers(), topic, gen.take(50));

    const timedOut = await runCli(['verify', '--timeout', '1s'], env, 170_000);
    expect(timedOut.stderr).toMatch(/never stood at the same offsets within 1s/);
    expect(timedOut.code).toBe(3);
    expect(await scratchSchemas()).toEqual([]);

    const child = spawn(process.execPath, [bin, 'verify', '--timeout', '10m'], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Mid-way: the scratch is folded (its build caught up) and verify waits for equal offsets.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { rows } = await pool.query<{ s: string }>(
        `select schema as s from ${VIEWS}.vy_builds
          where purpose = 'verify' and state <> 'dropped' and caught_up_at is not null`,
      );
      if (rows.length > 0) {
        expect(await scratchSchemas()).toEqual([rows[0]!.s]);
        break;
      }
      if (Date.now() > deadline) throw new Error(`verify never caught up: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(await scratchSchemas()).toEqual([]);
  });
});
