import { createLogger } from '@vault-yield/common';
import { createReader, type Reader, readerConfig } from '@vault-yield/reader';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopics, projector, publish } from '../projector/support.js';

/**
 * Readiness by freshness, on a real Kafka and Postgres: /ready turns 503 when the projection it
 * serves falls behind the log beyond READY_MAX_LAG_RECORDS (the projector stopped while records
 * keep coming), says why only to the admin, reports the same lag as a gauge, and turns 200 again
 * once a projector has caught up.
 */
const TOKEN = 'freshness-test-admin-token';
const silent = createLogger({ name: 'freshness-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

describe('/ready by freshness', () => {
  let db: TestDatabase;
  let reader: Reader;
  let url: string;
  const topic = uniqueTopic('ready-freshness');
  const gen = createHistoryGenerator({ vaults: 8, seed: 41 });

  const ready = async (admin = false) => {
    const res = await fetch(`${url}/ready`, admin ? { headers: { authorization: `Bearer ${TOKEN}` } } : {});
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  /** Polls /ready until it answers `status` (its reading is cached for a second). */
  const until = async (status: number, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await ready();
      if (r.status === status) return r;
      if (Date.now() > deadline) throw new Error(`/ready stayed ${r.status}, expected ${status}`);
      await new Promise((res) => setTimeout(res, 200));
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase('ready_freshness');
    await createTopic(kafkaBrokers(), topic, 3);
    reader = createReader(
      readerConfig(db.readerUrl, {
        schema: db.schema,
        port: 0,
        adminToken: TOKEN,
        freshness: {
          kafka: { brokers: kafkaBrokers(), topic, security: {} },
          indexerSchema: db.schema,
          maxLagRecords: 50,
          maxLagSeconds: 0,
        },
        logger: silent,
      }),
    );
    ({ url } = await reader.start());
  }, 60_000);

  afterAll(async () => {
    await reader?.stop();
    await deleteTopics();
    await db?.drop();
  });

  it('turns 503 while the projector is stopped and records keep coming, and 200 once it caught up', async () => {
    await publish(kafkaBrokers(), topic, gen.take(120));
    const first = projector({
      brokers: kafkaBrokers(),
      url: db.writerUrl,
      schema: db.schema,
      topic,
      group: 'live',
    });
    await first.start();
    await first.caughtUp({ timeoutMs: 60_000 });
    await until(200);
    const fresh = await ready(true);
    expect(fresh.body).toMatchObject({
      status: 'ready',
      lag: { records: 0, foldedBlock: expect.any(Number) },
    });

    // The projector stops; records keep coming: beyond 50 records of lag the reader leaves the pool.
    await first.stop();
    await publish(kafkaBrokers(), topic, gen.take(30));
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await ready()).status).toBe(200); // 30 records behind: within the limit
    await publish(kafkaBrokers(), topic, gen.take(90));
    const behind = await until(503);
    // The public answer stays minimal; the operators get the reason.
    expect(behind.body).toEqual({ error: { code: 'unavailable', message: 'not ready' } });
    const why = await ready(true);
    expect(why.status).toBe(503);
    expect((why.body.error as { message: string }).message).toMatch(
      /projection behind the log by 120 records \(limit 50\)/,
    );
    // The same lag as a gauge.
    const metrics = await (
      await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text();
    expect(metrics).toMatch(/^reader_projection_lag_records 120$/m);

    // A projector again: it folds the backlog, and the reader is ready again.
    const second = projector({
      brokers: kafkaBrokers(),
      url: db.writerUrl,
      schema: db.schema,
      topic,
      group: 'live',
    });
    await second.start();
    try {
      await second.caughtUp({ timeoutMs: 60_000 });
      await until(200);
      expect((await ready(true)).body).toMatchObject({
        lag: { records: 0, blocks: 0, seconds: 0, headBlock: null },
      });
      const after = await (
        await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).text();
      expect(after).toMatch(/^reader_projection_lag_records 0$/m);
    } finally {
      await second.stop();
    }
  }, 180_000);
});
