import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Q96 } from './full-math.js';
import {
  getSqrtRatioAtTick,
  getTickAtSqrtRatio,
  MAX_SQRT_RATIO,
  MAX_TICK,
  MIN_SQRT_RATIO,
  MIN_TICK,
} from './tick-math.js';

const tickArb = fc.integer({ min: MIN_TICK, max: MAX_TICK });

describe('TickMath', () => {
  it('matches v3-core known values', () => {
    expect(getSqrtRatioAtTick(0)).toBe(Q96);
    expect(getSqrtRatioAtTick(MIN_TICK)).toBe(MIN_SQRT_RATIO);
    expect(getSqrtRatioAtTick(MAX_TICK)).toBe(MAX_SQRT_RATIO);
    // v3-core test vectors (TickMath.spec.ts snapshots)
    expect(getSqrtRatioAtTick(MIN_TICK + 1)).toBe(4295343490n);
    expect(getSqrtRatioAtTick(MAX_TICK - 1)).toBe(1461373636630004318706518188784493106690254656249n);
  });

  it('rejects ticks outside the range', () => {
    expect(() => getSqrtRatioAtTick(MIN_TICK - 1)).toThrow(RangeError);
    expect(() => getSqrtRatioAtTick(MAX_TICK + 1)).toThrow(RangeError);
    expect(() => getSqrtRatioAtTick(0.5)).toThrow(RangeError);
  });

  it('agrees with sqrt(1.0001^tick)·2^96 to 1e-12 relative at every bit (checks each constant)', () => {
    for (let bit = 0; bit < 20; bit++) {
      for (const sign of [1, -1]) {
        const tick = sign * (1 << bit);
        if (Math.abs(tick) > MAX_TICK) continue;
        // compare logarithms: exp() of a large float exponent is less exact than the port
        const logExact = Math.log(Number(getSqrtRatioAtTick(tick))) - 96 * Math.LN2;
        const logFloat = (tick / 2) * Math.log1p(1e-4);
        expect(Math.abs(logExact - logFloat)).toBeLessThan(1e-12);
      }
    }
  });

  it('is strictly increasing', () => {
    fc.assert(
      fc.property(tickArb, (t) => {
        fc.pre(t < MAX_TICK);
        expect(getSqrtRatioAtTick(t + 1)).toBeGreaterThan(getSqrtRatioAtTick(t));
      }),
    );
  });

  it('getTickAtSqrtRatio inverts getSqrtRatioAtTick', () => {
    expect(getTickAtSqrtRatio(MIN_SQRT_RATIO)).toBe(MIN_TICK);
    expect(getTickAtSqrtRatio(MAX_SQRT_RATIO - 1n)).toBe(MAX_TICK - 1);
    expect(() => getTickAtSqrtRatio(MAX_SQRT_RATIO)).toThrow(RangeError);
    fc.assert(
      fc.property(fc.integer({ min: MIN_TICK, max: MAX_TICK - 1 }), (t) => {
        const s = getSqrtRatioAtTick(t);
        expect(getTickAtSqrtRatio(s)).toBe(t);
        expect(getTickAtSqrtRatio(getSqrtRatioAtTick(t + 1) - 1n)).toBe(t);
      }),
      { numRuns: 200 },
    );
  });
});
