import { createPgPool, DEFAULT_QUIET_MS, schemaActivity } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { afterAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopics, projector, publish, query } from './support.js';

/**
 * A projector with nothing left to fold still marks its schema as written (the heartbeat), so
 * retire's quiet check sees a schema an idle projector runs on; once it stops, the marks stop.
 */
describe('projector heartbeat', () => {
  let db: TestDatabase | undefined;
  afterAll(async () => {
    await db?.drop();
    await deleteTopics();
  });

  /** Milliseconds since the schema's latest offsets write, on the database's clock. */
  const lastWriteAgo = async (d: TestDatabase) => {
    const pool = createPgPool({ url: d.writerUrl, applicationName: 'heartbeat-test', max: 1 });
    try {
      return (await schemaActivity(pool, d.schema)).lastWriteAgoMs;
    } finally {
      await pool.end();
    }
  };
  /**
   * Makes the schema look ten minutes quiet; returns how old its latest write is right after, in
   * the same statement (a running projector's heartbeat may refresh it a moment later).
   */
  const backdate = async (d: TestDatabase) => {
    const [row] = await query<{ ago: number }>(
      d.writerUrl,
      d.schema,
      `with b as (update consumer_offsets set updated_at = now() - interval '10 minutes' returning updated_at)
       select extract(epoch from now() - max(updated_at)) * 1000 as ago from b`,
    );
    return Number(row?.ago);
  };

  it('keeps an idle projector’s schema fresh while it runs, and stops with it', async () => {
    const brokers = kafkaBrokers();
    const topic = uniqueTopic('proj-heartbeat');
    await createTopic(brokers, topic, 2);
    await publish(brokers, topic, createHistoryGenerator({ vaults: 6, seed: 9 }).take(60));
    db = await createTestDatabase('proj_heartbeat');
    const d = db;
    const p = projector({
      brokers,
      url: d.writerUrl,
      schema: d.schema,
      topic,
      group: 'hb',
      heartbeatMs: 100,
    });
    await p.start();
    await p.caughtUp();

    // Idle (everything folded) and made to look ten minutes quiet: the heartbeat brings it back.
    expect(await backdate(d)).toBeGreaterThan(9 * 60_000);
    const deadline = Date.now() + 10_000;
    while (((await lastWriteAgo(d)) ?? Number.POSITIVE_INFINITY) > 5_000) {
      if (Date.now() > deadline) throw new Error('no heartbeat within 10 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    // What it is for: retire's quiet check (DEFAULT_QUIET_MS) sees the schema as in use.
    expect(await lastWriteAgo(d)).toBeLessThan(DEFAULT_QUIET_MS);

    await p.stop();
    expect(await backdate(d)).toBeGreaterThan(9 * 60_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(await lastWriteAgo(d)).toBeGreaterThan(9 * 60_000);
  });
});
