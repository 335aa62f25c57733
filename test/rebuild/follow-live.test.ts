import { createLogger } from '@vault-yield/common';
import { ROLES } from '@vault-yield/devstack/postgres';
import type { VaultRecord } from '@vault-yield/domain';
import { type FollowingProjections, followLiveProjections, type Projector } from '@vault-yield/projector';
import { createReader, type Reader, readerConfig } from '@vault-yield/reader';
import {
  compareSchemas,
  createPgPool,
  dropProjectionSchema,
  liveSchema,
  type Pool,
  storedOffsetRows,
} from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli/run.js';
import { createTopic, deleteTopics, projector, publish } from '../projector/support.js';
import { caughtUp } from './support.js';

/**
 * Projectors follow a rebuild by themselves (#28 item 5), on a real Kafka and Postgres: a
 * projector following the live schema (FOLLOW_LIVE) and a reader on the views; `rebuild` switches
 * the views; the follower moves to the new schema and resumes from the offsets the build stored
 * there, so a record published afterwards shows through the views with no manual step, and the
 * new schema equals one folded straight through (nothing folded twice, nothing skipped). A
 * projector pinned to its schema stays. `status` names the new schema live, and never a dead one.
 * The roles are split as deployed: the migrator rebuilds and switches, the follower is the writer
 * (DML only), which the switch lets read which schema is live.
 */
const VIEWS = 'vault_yield_api';
const PINNED = 'vault_yield_pinned';
const silent = createLogger({ name: 'follow-live-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

describe('projectors follow a rebuild', () => {
  let db: TestDatabase;
  let pool: Pool;
  let follower: FollowingProjections;
  let pinned: Projector;
  let reader: Reader;
  let url: string;
  let env: Record<string, string>;
  const topic = uniqueTopic('follow-live');
  const gen = createHistoryGenerator({ vaults: 10, seed: 51 });
  const later = createHistoryGenerator({ vaults: 3, seed: 52 });
  const published: VaultRecord[] = [];

  beforeAll(async () => {
    // The production layout: rebuild and switch as the migrator, the follower as the DML-only writer.
    db = await createTestDatabase('follow_live', { split: true });
    pool = createPgPool({ url: db.migratorUrl, applicationName: 'follow-live-test', max: 2 });
    await createTopic(kafkaBrokers(), topic, 3);
    published.push(...gen.take(400));
    await publish(kafkaBrokers(), topic, published);
    env = cliEnv(
      db,
      { topic, views: VIEWS },
      {
        SCREEN_TOPIC: uniqueTopic('screen-none'),
        CATALOGUE_TOPIC: uniqueTopic('catalogue-none'),
        MIGRATE_DATABASE_URL: db.migratorUrl,
        WRITER_ROLE: ROLES.writer,
      },
    );
    const sw = await runCli(['rebuild', 'switch', '--schema', db.schema], env);
    expect(sw.code, sw.stderr).toBe(0);
    follower = followLiveProjections(
      {
        kafka: {
          brokers: kafkaBrokers(),
          topic,
          consumerGroup: 'live',
          groupId: `live.${topic}`,
          sessionTimeoutMs: 6_000,
        },
        databaseUrl: db.writerUrl,
        schema: 'vault_yield_never_used',
        logger: silent,
        strategy: null,
      },
      { viewsSchema: VIEWS, intervalMs: 500 },
    );
    await follower.started;
    expect(follower.schema()).toBe(db.schema);
    pinned = projector({
      brokers: kafkaBrokers(),
      // It migrates its own schema: the migrator's.
      url: db.migratorUrl,
      schema: PINNED,
      topic,
      group: 'pinned',
      migrate: true,
    });
    await pinned.start();
    await follower.current().vault.caughtUp({ timeoutMs: 60_000 });
    reader = createReader(readerConfig(db.readerUrl, { schema: VIEWS, port: 0, logger: silent }));
    ({ url } = await reader.start());
  }, 120_000);

  afterAll(async () => {
    await reader?.stop();
    await follower?.stop();
    await pinned?.stop();
    await pool?.end();
    await deleteTopics();
    await db?.drop();
  });

  it('after rebuild, the following projector folds into the new schema: a new record shows through the views', async () => {
    const r = await runCli(['rebuild', '--schema', 'vault_yield_fl1', '--group', 'follow-fl1'], env, 150_000);
    expect(r.code, r.stderr).toBe(0);
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_fl1');

    // No manual step: the follower moves by itself (notified by the switch).
    const deadline = Date.now() + 30_000;
    while (follower.schema() !== 'vault_yield_fl1') {
      if (Date.now() > deadline) throw new Error(`the follower stayed on ${follower.schema()}`);
      await new Promise((res) => setTimeout(res, 100));
    }

    const newVault = later.vaults()[0]!.vault.toLowerCase();
    expect((await fetch(`${url}/v1/vault/${newVault}/snapshot`)).status).toBe(404);
    const after = [...later.take(120), ...gen.take(80)];
    published.push(...after);
    await publish(kafkaBrokers(), topic, after);
    const until = Date.now() + 60_000;
    for (;;) {
      const res = await fetch(`${url}/v1/vault/${newVault}/snapshot`);
      if (res.status === 200) break;
      if (Date.now() > until) throw new Error(`${newVault} never showed through the views (${res.status})`);
      await new Promise((res) => setTimeout(res, 200));
    }

    // Exactly-once across the move: the followed schema, under the build's group, equals the
    // pinned projector's, which folded the same log straight through (it stayed on its schema).
    await caughtUp(pool, 'vault_yield_fl1', 'follow-fl1', topic);
    await caughtUp(pool, PINNED, 'pinned', topic);
    const diffs = await compareSchemas(pool, PINNED, 'vault_yield_fl1');
    expect(diffs.filter((d) => !d.equal)).toEqual([]);
    expect(diffs.find((d) => d.table === 'ledger')?.left?.rows).toBe(
      published.filter((x) => x.type !== 'mark').length,
    );
    // The old schema got nothing after the switch (the follower left it).
    const old = await storedOffsetRows(pool, db.schema, { groupId: 'live', topic });
    expect(old.reduce((a, o) => a + Number(o.nextOffset), 0)).toBeLessThanOrEqual(400);
  }, 240_000);

  it('status names the new schema live, and never a dead one', async () => {
    const ok = await runCli(['status', '--json'], env);
    expect(ok.code, ok.stderr).toBe(0);
    const report = JSON.parse(ok.stdout) as {
      liveSchema: string | null;
      liveProblem?: string;
      freshness: { records: number | null } | null;
    };
    expect(report.liveSchema).toBe('vault_yield_fl1');
    expect(report.freshness?.records).toBe(0);

    // The live schema dies under the views (dropped by hand, as the dev stack's reset did).
    await follower.stop();
    await dropProjectionSchema(pool, 'vault_yield_fl1');
    const dead = await runCli(['status', '--json'], env);
    expect(dead.code, dead.stderr).toBe(0);
    const d = JSON.parse(dead.stdout) as { liveSchema: string | null; liveProblem?: string };
    expect(d.liveSchema).toBeNull();
    expect(d.liveProblem).toMatch(/names vault_yield_fl1 live, but schema vault_yield_fl1 no longer exists/);
    const text = await runCli(['status'], env);
    expect(text.stdout).toMatch(/^live schema {3}none: /m);
    expect(text.stdout).not.toMatch(/^live schema {3}vault_yield_fl1/m);
  }, 60_000);
});
