import { createLogger } from '@vault-yield/common';
import { ROLES } from '@vault-yield/devstack/postgres';
import type { VaultRecord } from '@vault-yield/domain';
import { type FollowingProjections, followLiveProjections } from '@vault-yield/projector';
import { createPgPool, liveSchema, type Pool } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { startReader, type TestReader } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli/run.js';
import { createTopic, deleteTopics, publish } from '../projector/support.js';
import { caughtUp } from './support.js';

/**
 * A projector that follows a switch follows the topic too (#48 item 2), on a real Kafka and
 * Postgres in the deployed layout: a FOLLOW_LIVE projector (the writer) folds the live topic; the
 * log is cut again into a new topic (as `reindex` does: same records, other partition count) and
 * `rebuild --topic NEW` — the path `reindex` runs, `rebuild(['--topic', NEW, …], 'reindex')` —
 * folds it into a new schema and switches, with neither READER_ROLE nor WRITER_ROLE set. The
 * follower moves to the new schema AND the new topic, under the build's group: a record published
 * to the new topic shows through the views, and the new schema stores the new topic's offsets
 * only (`status` lists one topic for the group). Before, it moved the schema but kept the old
 * topic from offset 0 under the build's group: nothing published to the new topic ever showed.
 */
const VIEWS = 'vault_yield_api';
const silent = createLogger({ name: 'follow-topic-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

describe('a projector following a reindex follows its topic', () => {
  let db: TestDatabase;
  let pool: Pool;
  let follower: FollowingProjections;
  let reader: TestReader;
  let env: Record<string, string>;
  const oldTopic = uniqueTopic('follow-topic-old');
  const newTopic = uniqueTopic('follow-topic-new');
  const gen = createHistoryGenerator({ vaults: 8, seed: 71 });
  const later = createHistoryGenerator({ vaults: 2, seed: 72 });
  const log: VaultRecord[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('follow_topic', { split: true });
    pool = createPgPool({ url: db.migratorUrl, applicationName: 'follow-topic-test', max: 2 });
    await createTopic(kafkaBrokers(), oldTopic, 3);
    await createTopic(kafkaBrokers(), newTopic, 2);
    log.push(...gen.take(300));
    await publish(kafkaBrokers(), oldTopic, log);
    await publish(kafkaBrokers(), newTopic, log);
    const full = cliEnv(
      db,
      { topic: oldTopic, views: VIEWS },
      {
        SCREEN_TOPIC: uniqueTopic('screen-none'),
        CATALOGUE_TOPIC: uniqueTopic('catalogue-none'),
        MIGRATE_DATABASE_URL: db.migratorUrl,
      },
    );
    // The views' bootstrap names the roles once; the operator's later commands do not.
    const sw = await runCli(['rebuild', 'switch', '--schema', db.schema], {
      ...full,
      WRITER_ROLE: ROLES.writer,
    });
    expect(sw.code, sw.stderr).toBe(0);
    const { READER_ROLE: _reader, ...bare } = full;
    env = bare;
    follower = followLiveProjections(
      {
        kafka: {
          brokers: kafkaBrokers(),
          topic: oldTopic,
          consumerGroup: 'live',
          groupId: `live.${oldTopic}`,
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
    await caughtUp(pool, db.schema, 'live', oldTopic);
    reader = await startReader(db, { schema: VIEWS });
  }, 120_000);

  afterAll(async () => {
    await reader?.stop();
    await follower?.stop();
    await pool?.end();
    await deleteTopics();
    await db?.drop();
  });

  it('after rebuild --topic NEW the follower folds NEW into the new schema, and only NEW', async () => {
    const r = await runCli(
      ['rebuild', '--topic', newTopic, '--schema', 'vault_yield_ft1', '--group', 'reindex-ft1'],
      env,
      150_000,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_ft1');
    expect(r.stdout).toMatch(
      new RegExp(
        `^next: projectors with FOLLOW_LIVE=true .* folding ${newTopic} under group reindex-ft1`,
        'm',
      ),
    );

    const deadline = Date.now() + 30_000;
    while (follower.schema() !== 'vault_yield_ft1') {
      if (Date.now() > deadline) throw new Error(`the follower stayed on ${follower.schema()}`);
      await new Promise((res) => setTimeout(res, 100));
    }

    // A record of a new vault, published to the new topic only, shows through the views.
    const newVault = later.vaults()[0]!.vault.toLowerCase();
    expect((await reader.get(`/v1/vault/${newVault}/snapshot`)).status).toBe(404);
    const after = later.take(60);
    log.push(...after);
    await publish(kafkaBrokers(), newTopic, after);
    const until = Date.now() + 60_000;
    for (;;) {
      const res = await reader.get(`/v1/vault/${newVault}/snapshot`);
      if (res.status === 200) break;
      if (Date.now() > until) throw new Error(`${newVault} never showed through the views (${res.status})`);
      await new Promise((res) => setTimeout(res, 200));
    }
    await caughtUp(pool, 'vault_yield_ft1', 'reindex-ft1', newTopic);

    // The new schema holds the offsets of its build's topic only, under its build's group.
    const { rows } = await pool.query<{ group_id: string; topic: string }>(
      'select distinct group_id, topic from vault_yield_ft1.consumer_offsets order by 1, 2',
    );
    expect(rows).toEqual([{ group_id: 'reindex-ft1', topic: newTopic }]);
    const status = await runCli(['status', '--json'], env);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as { projector: { group: string; topic: string }[] };
    expect(report.projector.map((p) => [p.group, p.topic])).toEqual([['reindex-ft1', newTopic]]);
    // Every record of the new topic folded once: a ledger row each (marks have none).
    const ledger = await pool.query<{ n: number }>('select count(*)::int as n from vault_yield_ft1.ledger');
    expect(ledger.rows[0]?.n).toBe(log.filter((x) => x.type !== 'mark').length);
  }, 240_000);

  it("a later rebuild folds the live projection's topic (NEW): KAFKA_TOPIC still naming OLD is refused, nothing built", async () => {
    // The operator's environment after the reindex still says KAFKA_TOPIC=OLD: folding it would
    // switch the reader back to the log the reindex replaced.
    const refused = await runCli(
      ['rebuild', '--schema', 'vault_yield_ft2', '--group', 'rebuild-ft2'],
      env,
      60_000,
    );
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain(
      `KAFKA_TOPIC=${oldTopic}, but the live projection vault_yield_ft1 reads ${newTopic}`,
    );
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_ft1');
    const none = await pool.query(`select 1 from pg_namespace where nspname = 'vault_yield_ft2'`);
    expect(none.rowCount).toBe(0);

    // Unset, the live projection names the topic: NEW, folded into the new schema and switched.
    const { KAFKA_TOPIC: _old, ...unset } = env;
    const r = await runCli(
      ['rebuild', '--schema', 'vault_yield_ft2', '--group', 'rebuild-ft2'],
      unset,
      150_000,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`records of ${newTopic}`);
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_ft2');
    const { rows } = await pool.query<{ topic: string }>(
      'select distinct topic from vault_yield_ft2.consumer_offsets order by 1',
    );
    expect(rows).toEqual([{ topic: newTopic }]);
  }, 240_000);
});
