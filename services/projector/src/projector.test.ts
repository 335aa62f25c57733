import { createLogger } from '@vault-yield/common';
import { encodeRecord } from '@vault-yield/domain';
import type { LogBatch } from '@vault-yield/log';
import { createPgPool, createProjectionStore } from '@vault-yield/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/harness/index.js';
import { createHistoryGenerator } from '../../../test/projector/generator.js';
import { applyBatch } from './apply.js';
import { loadProjectorConfig } from './config.js';
import { type Decoded, decode } from './fold.js';
import { createProjectorMetrics, serveMetrics } from './metrics.js';

const log = createLogger({ name: 'projector-unit', level: 'silent' });

describe('projector config', () => {
  it('has the documented defaults', () => {
    const c = loadProjectorConfig({ KAFKA_BROKERS: '127.0.0.1:19092', DATABASE_URL: 'postgres://x@h/db' });
    expect(c).toMatchObject({
      KAFKA_BROKERS: ['127.0.0.1:19092'],
      PROJECTION_SCHEMA: 'vault_yield',
      KAFKA_TOPIC: 'vault-records',
      CONSUMER_GROUP: 'vault-yield-projector',
      LOG_LEVEL: 'info',
      MIGRATE: false,
    });
    expect(c.METRICS_PORT).toBeUndefined();
  });
  it('names every bad variable', () => {
    expect(() => loadProjectorConfig({ KAFKA_BROKERS: 'nope', DATABASE_URL: 'mysql://x' })).toThrow(
      /KAFKA_BROKERS[\s\S]*DATABASE_URL/,
    );
  });
});

describe('applyBatch offsets', () => {
  let db: TestDatabase;
  const pool = () =>
    createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'apply-test', max: 2 });
  beforeAll(async () => {
    db = await createTestDatabase('apply_offsets');
  });
  afterAll(async () => {
    await db.drop();
  });

  const records = createHistoryGenerator({ vaults: 5, seed: 4 }).take(30);
  const batch = (from: number, to: number): LogBatch<Decoded> => ({
    topic: 't',
    partition: 0,
    messages: records.slice(from, to).map((r, i) => {
      const value = encodeRecord(r);
      return {
        partition: 0,
        offset: String(from + i),
        key: null,
        value,
        timestamp: 0,
        decoded: decode(value),
      };
    }),
    commit: { groupId: 'g', topic: 't', partition: 0, nextOffset: String(to) },
    highWatermark: '30',
  });

  it('refuses a batch that starts after the stored offset, and applies only the new part of an overlapping one', async () => {
    const p = pool();
    const store = createProjectionStore(p);
    try {
      expect(await store.transaction((tx) => applyBatch(tx, batch(5, 10), log))).toEqual({
        kind: 'gap',
        seekTo: '0',
      });
      const a = await store.transaction((tx) => applyBatch(tx, batch(0, 10), log));
      expect(a.kind === 'applied' && a.stats.applied).toBe(10);
      const b = await store.transaction((tx) => applyBatch(tx, batch(4, 20), log));
      expect(b.kind === 'applied' && [b.stats.skipped, b.stats.applied]).toEqual([6, 10]);
      const c = await store.transaction((tx) => applyBatch(tx, batch(0, 20), log));
      expect(c.kind === 'applied' && [c.stats.skipped, c.stats.applied]).toEqual([20, 0]);
      const { rows } = await p.query<{ n: number; s: number }>(
        'select (select count(*)::int from ledger) as n, (select sum(records_applied)::int from vault_snapshot) as s',
      );
      expect(rows[0]).toEqual({ n: 20, s: 20 });
      expect(await store.storedOffsets('g', 't', [0])).toEqual(new Map([[0, '20']]));
    } finally {
      await p.end();
    }
  });
});

describe('metrics endpoint', () => {
  it('serves the registry on /metrics', async () => {
    const metrics = createProjectorMetrics();
    metrics.deadLetters.inc({ kind: 'decode' }, 2);
    const server = await serveMetrics(metrics.registry, 0);
    try {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(body).toContain('projector_dead_letters_total{kind="decode"} 2');
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
