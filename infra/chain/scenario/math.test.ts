import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { floorTick, getSqrtRatioAtTick, isqrt, poolPriceFromUsd, sqrtPriceX96FromAnswers } from './math.js';

// The v3 math itself is tested in packages/domain; these cover the driver's price helpers.
describe('scenario price helpers', () => {
  it('pool price round-trips the USD price', () => {
    const { tick } = poolPriceFromUsd(3000, 1, 18, 6);
    const human = 1.0001 ** tick * 10 ** (18 - 6);
    expect(Math.abs(human / 3000 - 1)).toBeLessThan(2e-4);
  });

  it('slot0 keeps the v3 invariant: sqrtP is the tick’s ratio, and the next tick is above the price', () => {
    for (const usd of [0.5, 1, 2950, 3000, 3240, 65_000]) {
      const { tick, sqrtPriceX96 } = poolPriceFromUsd(usd, 1, 18, 6);
      expect(sqrtPriceX96).toBe(getSqrtRatioAtTick(tick));
      expect(1.0001 ** tick * 1e12).toBeLessThanOrEqual(usd * (1 + 1e-12));
      expect(1.0001 ** (tick + 1) * 1e12).toBeGreaterThan(usd * (1 - 1e-12));
    }
  });

  it('floors ticks to the spacing, also below zero', () => {
    expect(floorTick(125, 60)).toBe(120);
    expect(floorTick(-125, 60)).toBe(-180);
    expect(floorTick(-120, 60)).toBe(-120);
  });

  it('isqrt is the floor square root, also for 256-bit numbers', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }), (n) => {
        const r = isqrt(n);
        return r * r <= n && (r + 1n) * (r + 1n) > n;
      }),
    );
  });

  it('sqrtPriceX96 from feed answers: WETH/USDC at 3000 and USDC/ARB at 0.8', () => {
    const toHuman = (sp: bigint, d0: number, d1: number) => (Number(sp) / 2 ** 96) ** 2 * 10 ** (d0 - d1);
    expect(toHuman(sqrtPriceX96FromAnswers(3000_00000000n, 1_00000000n, 18, 6), 18, 6)).toBeCloseTo(3000, 6);
    expect(toHuman(sqrtPriceX96FromAnswers(1_00000000n, 80000000n, 6, 18), 6, 18)).toBeCloseTo(1.25, 9);
  });
});
