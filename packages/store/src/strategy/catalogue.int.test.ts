import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { makeCatalogue, makeScreen } from '@vault-yield/test-kit/screen';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, type Pool, type PoolClient, withTransaction } from '../pool/index.js';
import { applyCatalogue, applyScreen } from './index.js';

describe('screen and catalogue projection', () => {
  let db: TestDatabase;
  let pool: Pool;
  beforeAll(async () => {
    db = await createTestDatabase('catalogue');
    pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'test', max: 4 });
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  const inTx = <T>(fn: (c: PoolClient) => Promise<T>) => withTransaction(pool, fn);
  const screenVersion = async () =>
    (await pool.query<{ version: string }>('select version from screen_meta')).rows[0]?.version;
  const pairsOf = async (id: string) =>
    (await pool.query<{ pairs: unknown }>('select pairs from strategies where id = $1', [id])).rows[0]?.pairs;

  it('applies a catalogue, then the screen fills the strategies’ pairs', async () => {
    expect(await inTx((c) => applyCatalogue(c, makeCatalogue(1000)))).toBe('applied');
    expect(await pairsOf('steady-eth')).toEqual([]);
    expect(await inTx((c) => applyScreen(c, makeScreen('s-2', 2000, 0)))).toBe('applied');
    expect(await pairsOf('steady-eth')).toEqual([{ a: 'WETH', b: 'USDC', venues: ['uniswap-v3'] }]);
    const assets = await pool.query('select symbol, category, rank from universe_assets order by rank');
    expect(assets.rows.map((r) => r.symbol)).toEqual(['WETH', 'USDC', 'WBTC', 'TSLAx', 'PEPE']);
    const pairs = await pool.query(
      'select a, b, token_a < token_b as ordered from universe_pairs order by rank',
    );
    expect(pairs.rows).toHaveLength(3);
    expect(pairs.rows.every((r) => r.ordered)).toBe(true);
  });

  it('newest wins: an older screen and a duplicate are no-ops, in any delivery order', async () => {
    expect(await inTx((c) => applyScreen(c, makeScreen('s-1', 1000, 1)))).toBe('older');
    expect(await inTx((c) => applyScreen(c, makeScreen('s-2', 2000, 0)))).toBe('duplicate');
    expect(await screenVersion()).toBe('s-2');
    // Same timestamp, different run: the greater id wins whichever arrives first.
    expect(await inTx((c) => applyScreen(c, makeScreen('s-2b', 2000, 1)))).toBe('applied');
    expect(await inTx((c) => applyScreen(c, makeScreen('s-2', 2000, 0)))).toBe('older');
    expect(await screenVersion()).toBe('s-2b');
  });

  it('a strategy’s pairs change when a newer screen arrives', async () => {
    expect(await pairsOf('steady-eth')).toEqual([{ a: 'USDC', b: 'WBTC', venues: ['uniswap-v3'] }]);
    expect(await inTx((c) => applyScreen(c, makeScreen('s-3', 3000, 0)))).toBe('applied');
    expect(await pairsOf('steady-eth')).toEqual([{ a: 'WETH', b: 'USDC', venues: ['uniswap-v3'] }]);
  });

  it('a newer catalogue renames and keeps the live pairs; an older one is ignored', async () => {
    expect(await inTx((c) => applyCatalogue(c, makeCatalogue(5000, { 'steady-eth': 'Steady Ether' })))).toBe(
      'applied',
    );
    expect(await inTx((c) => applyCatalogue(c, makeCatalogue(4000, { 'steady-eth': 'Old name' })))).toBe(
      'older',
    );
    expect(await inTx((c) => applyCatalogue(c, makeCatalogue(5000, { 'steady-eth': 'Steady Ether' })))).toBe(
      'duplicate',
    );
    const { rows } = await pool.query('select name, pairs from strategies where id = $1', ['steady-eth']);
    expect(rows[0]).toEqual({
      name: 'Steady Ether',
      pairs: [{ a: 'WETH', b: 'USDC', venues: ['uniswap-v3'] }],
    });
  });

  it('no reader ever sees half a screen', async () => {
    let stop = false;
    const seen = new Set<string>();
    const reader = (async () => {
      while (!stop) {
        const { rows } = await pool.query<{ versions: string[] }>(
          `select array(select distinct v from (
             select screen_version as v from universe_assets
             union all select screen_version from universe_pairs
             union all select version from screen_meta
             union all select screen_version from strategies) x) as versions`,
        );
        const versions = rows[0]!.versions;
        expect(versions).toHaveLength(1);
        seen.add(versions[0]!);
      }
    })();
    for (let i = 0; i < 30; i++)
      await inTx((c) => applyScreen(c, makeScreen(`run-${10 + i}`, 10_000 + i, i)));
    stop = true;
    await reader;
    expect(seen.size).toBeGreaterThan(1);
    expect(await screenVersion()).toBe('run-39');
  });
});
