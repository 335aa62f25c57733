import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isInRange, sqrtPriceX96ToPrice, tickToPrice } from './price.js';
import { getSqrtRatioAtTick } from './tick-math.js';

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
});
