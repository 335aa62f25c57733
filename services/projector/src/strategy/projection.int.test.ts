import type { LogBatch } from '@vault-yield/log';
import { createPgPool, createStrategyStore, type Pool } from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { makeCatalogue, makeScreen } from '@vault-yield/test-kit/screen';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBatch } from '../runner/index.js';
import { type DecodedStrategyRecord, decodeStrategyRecord } from './decode.js';
import { createStrategyProjection } from './projection.js';

/** `values[from, to)` of the screen topic's one partition as one batch, offsets their indexes. */
function batchOf(
  values: readonly (string | object)[],
  from: number,
  to: number,
): LogBatch<DecodedStrategyRecord> {
  return {
    topic: 'screen',
    partition: 0,
    messages: values.slice(from, to).map((v, i) => {
      const value = Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
      return {
        partition: 0,
        offset: String(from + i),
        key: Buffer.from('screen'),
        value,
        timestamp: 0,
        decoded: decodeStrategyRecord('screen', value),
      };
    }),
    commit: { groupId: 'm-screen', topic: 'screen', partition: 0, nextOffset: String(to) },
    highWatermark: String(values.length),
  };
}

describe('the strategy projection, fed by the exactly-once runner', () => {
  let db: TestDatabase;
  let pool: Pool;
  beforeAll(async () => {
    db = await createTestDatabase('market_runner');
    pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'market-test', max: 2 });
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('refuses a batch past the stored offset (a gap), skips what it applied, dead-letters what does not decode', async () => {
    const store = createStrategyStore(pool);
    const projection = createStrategyProjection();
    const run = (from: number, to: number) =>
      store.transaction((tx) => runBatch(tx, batchOf(values, from, to), projection));
    const values = [
      makeScreen('a', 1000),
      '{"not": "a screen"}',
      makeScreen('b', 2000),
      makeScreen('a', 1000),
    ];

    expect(await run(1, 3)).toEqual({ kind: 'gap', seekTo: '0' });
    expect((await pool.query('select count(*)::int as n from dead_letters')).rows[0].n).toBe(0);

    const first = await run(0, 2);
    expect(first).toMatchObject({ kind: 'applied', skipped: 0, nextOffset: '2' });
    expect(first.kind === 'applied' && first.out).toEqual([
      { offset: '0', kind: 'screen', outcome: 'applied' },
    ]);
    expect(first.kind === 'applied' && first.letters.map((l) => [l.offset, l.kind, l.vault])).toEqual([
      ['1', 'decode', null],
    ]);

    const overlap = await run(1, 4);
    expect(overlap).toMatchObject({ kind: 'applied', skipped: 1, nextOffset: '4' });
    expect(overlap.kind === 'applied' && overlap.out).toEqual([
      { offset: '2', kind: 'screen', outcome: 'applied' },
      { offset: '3', kind: 'screen', outcome: 'older' },
    ]);
    const again = await run(0, 4);
    expect(again).toMatchObject({ kind: 'applied', skipped: 4, out: null });

    expect((await pool.query('select version from screen_meta')).rows).toEqual([{ version: 'b' }]);
    expect((await pool.query('select "offset" from dead_letters')).rows).toEqual([{ offset: 1 }]);
    expect(await store.storedOffsets('m-screen', 'screen', [0])).toEqual(new Map([[0, '4']]));
  });

  it('the catalogue topic through the same projection', async () => {
    const store = createStrategyStore(pool);
    const value = Buffer.from(JSON.stringify(makeCatalogue(1000)));
    const batch: LogBatch<DecodedStrategyRecord> = {
      topic: 'catalogue',
      partition: 0,
      messages: [
        {
          partition: 0,
          offset: '0',
          key: null,
          value,
          timestamp: 0,
          decoded: decodeStrategyRecord('catalogue', value),
        },
      ],
      commit: { groupId: 'm-catalogue', topic: 'catalogue', partition: 0, nextOffset: '1' },
      highWatermark: '1',
    };
    const r = await store.transaction((tx) => runBatch(tx, batch, createStrategyProjection()));
    expect(r.kind === 'applied' && r.out).toEqual([{ offset: '0', kind: 'catalogue', outcome: 'applied' }]);
    expect((await pool.query('select count(*)::int as n from strategies')).rows[0].n).toBeGreaterThan(0);
  });
});
