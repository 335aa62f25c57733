import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isInRange, rangePrices, sqrtPriceX96ToPrice, tickToPrice } from './price.js';
import { getSqrtRatioAtTick, MAX_TICK, MIN_TICK } from './tick-math.js';

describe('human prices', () => {
  it('tick 0 is 1 adjusted for decimals', () => {
    expect(tickToPrice(0, 18, 18)).toBe(1);
    expect(tickToPrice(0, 18, 6)).toBe(1e12);
  });

  it('WETH/USDC around 2000 USDC per WETH', () => {
    // raw price 1.0001^tick = 2000 · 10^(6−18)
    const tick = Math.round(Math.log(2000e-12) / Math.log(1.0001));
    expect(tickToPrice(tick, 18, 6)).toBeCloseTo(2000, -1);
  });

  it('sqrtPriceX96 and tick agree', () => {
    fc.assert(
      fc.property(fc.integer({ min: -400_000, max: 400_000 }), fc.integer({ min: 0, max: 18 }), (t, d) => {
        const a = tickToPrice(t, 18, d);
        const b = sqrtPriceX96ToPrice(getSqrtRatioAtTick(t), 18, d);
        expect(Math.abs(a / b - 1)).toBeLessThan(1e-9);
      }),
    );
  });

  it('in range iff tickLower ≤ tick < tickUpper', () => {
    expect(isInRange(-10, -10, 10)).toBe(true);
    expect(isInRange(9, -10, 10)).toBe(true);
    expect(isInRange(10, -10, 10)).toBe(false);
    expect(isInRange(-11, -10, 10)).toBe(false);
  });

  /**
   * A pool's slot0 as the chain leaves it: the tick is the floor of the sqrt price's log, except
   * after a swap that ends exactly on a tick going down (sqrt price = that tick's ratio, tick one
   * below it). The sqrt price is drawn inside the tick's interval, at either end, or at that edge.
   */
  const slot0 = fc
    .record({
      tick: fc.integer({ min: MIN_TICK, max: MAX_TICK - 1 }),
      at: fc.oneof(
        fc.constant('start'),
        fc.constant('end-1'),
        fc.constant('down-swap-edge'),
        fc.double({ min: 0, max: 1, noNaN: true }),
      ),
    })
    .map(({ tick, at }) => {
      const lo = getSqrtRatioAtTick(tick);
      const hi = getSqrtRatioAtTick(tick + 1);
      const sqrtPriceX96 =
        at === 'start'
          ? lo
          : at === 'end-1'
            ? hi - 1n
            : at === 'down-swap-edge'
              ? hi
              : lo + (BigInt(Math.floor(at * 1e9)) * (hi - 1n - lo)) / 1_000_000_000n;
      return { tick, sqrtPriceX96 };
    });
  const position = (tickLower: number, tickUpper: number) => ({
    tickLower,
    tickUpper,
    sqrtLower: getSqrtRatioAtTick(tickLower),
    sqrtUpper: getSqrtRatioAtTick(tickUpper),
  });
  const decimals = fc.oneof(
    fc.constant([18, 6] as const),
    fc.constant([6, 18] as const),
    fc.tuple(fc.integer({ min: 0, max: 24 }), fc.integer({ min: 0, max: 24 })),
  );

  it('the served range never contradicts inRange: lower ≤ current < upper ⇔ in range, both token orders', () => {
    fc.assert(
      fc.property(
        slot0,
        // bounds near the pool's tick (where rounding matters), or anywhere
        fc.integer({ min: -3, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        fc.integer({ min: MIN_TICK, max: MAX_TICK - 1 }),
        fc.integer({ min: 1, max: 20_000 }),
        decimals,
        (pool, offset, width, near, anywhere, span, [d0, d1]) => {
          const lo = near ? pool.tick + offset : anywhere;
          const up = Math.min(MAX_TICK, lo + (near ? width : span));
          fc.pre(lo >= MIN_TICK && lo < up);
          const r = rangePrices(pool, position(lo, up), d0, d1);
          expect(r.lower).toBeLessThan(r.upper);
          expect(r.lower <= r.current && r.current < r.upper).toBe(isInRange(pool.tick, lo, up));
          // and never more than rounding away from the exact price
          const exact = sqrtPriceX96ToPrice(pool.sqrtPriceX96, d0, d1);
          expect(Math.abs(r.current - exact)).toBeLessThanOrEqual(Math.abs(exact) * 1e-12);
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('a pool at its lower tick is in range and shows current ≥ lower (1,994.2488… USDC per WETH)', () => {
    // the case: tick = tickLower, current from the exact sqrt price, lower from 1.0001^tick
    const tickLower = Math.floor(Math.log(1994.2488640047748e-12) / Math.log(1.0001));
    const pool = { tick: tickLower, sqrtPriceX96: getSqrtRatioAtTick(tickLower) };
    const r = rangePrices(pool, position(tickLower, tickLower + 60), 18, 6);
    expect(isInRange(pool.tick, tickLower, tickLower + 60)).toBe(true);
    expect(r.current).toBeGreaterThanOrEqual(r.lower);
    expect(r.current).toBeLessThan(r.upper);
    // the former display (bounds from 1.0001^tick) put this price below its own lower bound
    expect(tickToPrice(tickLower, 18, 6)).toBeGreaterThan(sqrtPriceX96ToPrice(pool.sqrtPriceX96, 18, 6));
  });
});
