import { describe, expect, it } from 'vitest';
import { PriceWatch } from './price-watch.js';

const A = '0x00000000000000000000000000000000000000a1' as const;
const B = '0x00000000000000000000000000000000000000b2' as const;
const FEED_A = '0x00000000000000000000000000000000000000fa' as const;
const FEED_B = '0x00000000000000000000000000000000000000fb' as const;
const POOL = '0x0000000000000000000000000000000000000001' as const;

function watch(): PriceWatch {
  const t = new PriceWatch();
  t.applyReading({
    kind: 'token',
    block: 10,
    info: { address: A, symbol: 'A', decimals: 18 },
    feed: { token: A, feed: FEED_A, feedDecimals: 8, answer: 300000000000n, updatedAt: 1000 },
  });
  t.applyReading({
    kind: 'token',
    block: 10,
    info: { address: B, symbol: 'B', decimals: 6 },
    feed: { token: B, feed: FEED_B, feedDecimals: 8, answer: 100000000n, updatedAt: 1000 },
  });
  t.applyReading({
    kind: 'pool',
    block: 10,
    pool: { address: POOL, venue: 'v', feeTier: 500, sqrtPriceX96: '1', tick: 5, token0: A, token1: B },
  });
  return t;
}

describe('PriceWatch', () => {
  it('ignores events already contained in a read (at or below its block)', () => {
    const t = watch();
    expect(t.applySwap(POOL, 10, '2', 7)).toBe(false);
    expect(t.applyAnswer(FEED_A, 10, 1n, 2000)).toEqual([]);
    expect(t.applySwap(POOL, 11, '2', 7)).toBe(true);
    expect(t.applyAnswer(FEED_A, 11, 310000000000n, 2000)).toEqual([A]);
    expect(t.poolTick(POOL)).toBe(7);
    expect(t.answerOf(A)).toBe(310000000000n);
  });

  it('moves a token to its new feed from the read at the FeedSet block', () => {
    const t = watch();
    t.applyReading({
      kind: 'token',
      block: 20,
      info: { address: A, symbol: 'A', decimals: 18 },
      feed: { token: A, feed: FEED_B, feedDecimals: 8, answer: 5n, updatedAt: 1000 },
    });
    expect(t.applyAnswer(FEED_A, 21, 999n, 2000)).toEqual([]);
    expect(t.applyAnswer(FEED_B, 21, 7n, 2000).sort()).toEqual([A, B].sort());
  });
});
