import { describe, expect, it } from 'vitest';
import { ContextError } from './errors.js';
import { MarketTracker } from './market.js';

const A = '0x00000000000000000000000000000000000000a1' as const;
const B = '0x00000000000000000000000000000000000000b2' as const;
const FEED_A = '0x00000000000000000000000000000000000000fa' as const;
const FEED_B = '0x00000000000000000000000000000000000000fb' as const;
const POOL = '0x0000000000000000000000000000000000000001' as const;
const set = { token0: A, token1: B, rewardToken: A, pool: POOL };

function tracker(): MarketTracker {
  const t = new MarketTracker();
  t.applySnapshot({
    kind: 'token',
    block: 10,
    info: { address: A, symbol: 'A', decimals: 18 },
    feed: { token: A, feed: FEED_A, feedDecimals: 8, answer: 300000000000n },
  });
  t.applySnapshot({
    kind: 'token',
    block: 10,
    info: { address: B, symbol: 'B', decimals: 6 },
    feed: { token: B, feed: FEED_B, feedDecimals: 8, answer: 100000000n },
  });
  t.applySnapshot({
    kind: 'pool',
    block: 10,
    pool: { address: POOL, venue: 'v', feeTier: 500, sqrtPriceX96: '1', tick: 5, token0: A, token1: B },
  });
  return t;
}

describe('MarketTracker', () => {
  it('values like ValuationReader.read: token0, token1, distinct reward token; the vault’s pool', () => {
    const ctx = tracker().context(set);
    expect(ctx.tokens.map((t) => [t.symbol, t.priceUsd])).toEqual([
      ['A', '3000'],
      ['B', '1'],
    ]);
    expect(ctx.pools).toHaveLength(1);
  });

  it('ignores events already contained in a read (at or below its block)', () => {
    const t = tracker();
    expect(t.applySwap(POOL, 10, '2', 7)).toBe(false);
    expect(t.applyAnswer(FEED_A, 10, 1n)).toEqual([]);
    expect(t.applySwap(POOL, 11, '2', 7)).toBe(true);
    expect(t.applyAnswer(FEED_A, 11, 310000000000n)).toEqual([A]);
    const ctx = t.context(set);
    expect(ctx.pools[0]!.tick).toBe(7);
    expect(ctx.tokens[0]!.priceUsd).toBe('3100');
  });

  it('moves a token to its new feed from the read at the FeedSet block', () => {
    const t = tracker();
    t.applySnapshot({
      kind: 'token',
      block: 20,
      info: { address: A, symbol: 'A', decimals: 18 },
      feed: { token: A, feed: FEED_B, feedDecimals: 8, answer: 5n },
    });
    expect(t.applyAnswer(FEED_A, 21, 999n)).toEqual([]);
    expect(t.applyAnswer(FEED_B, 21, 7n).sort()).toEqual([A, B].sort());
  });

  it('refuses to value a token without a feed or with a negative answer', () => {
    const t = tracker();
    t.applyAnswer(FEED_B, 12, -1n);
    expect(() => t.context(set)).toThrow(ContextError);
  });
});
