import { describe, expect, it } from 'vitest';
import {
  getAmountsForLiquidity,
  getLiquidityForAmounts,
  getSqrtRatioAtTick,
  MAX_TICK,
  MIN_TICK,
  poolPriceFromUsd,
  Q96,
} from './math.js';

describe('scenario v3 math', () => {
  it('matches TickMath at the known points', () => {
    expect(getSqrtRatioAtTick(0)).toBe(Q96);
    expect(getSqrtRatioAtTick(MIN_TICK)).toBe(4295128739n);
    expect(getSqrtRatioAtTick(MAX_TICK)).toBe(1461446703485210103287273052203988822378723970342n);
  });

  it('agrees with sqrt(1.0001^tick) for ticks touching every bit', () => {
    for (const tick of [1, -1, 2, 7, 100, -1000, 12345, -54321, 195_000, -195_000, 524_288, -700_001]) {
      const expected = Math.sqrt(1.0001 ** tick) * 2 ** 96;
      const got = Number(getSqrtRatioAtTick(tick));
      expect(Math.abs(got / expected - 1)).toBeLessThan(1e-9);
    }
  });

  it('liquidity from amounts never needs more than the amounts', () => {
    const { sqrtPriceX96: sp, tick } = poolPriceFromUsd(3000, 1, 18, 6);
    const sa = getSqrtRatioAtTick(tick - 600);
    const sb = getSqrtRatioAtTick(tick + 600);
    const a0 = 10n ** 18n;
    const a1 = 3000n * 10n ** 6n;
    const l = getLiquidityForAmounts(sp, sa, sb, a0, a1);
    const { amount0, amount1 } = getAmountsForLiquidity(sp, sa, sb, l);
    expect(amount0 <= a0 && amount1 <= a1).toBe(true);
    expect(amount0 > 0n && amount1 > 0n).toBe(true);
  });

  it('pool price round-trips the USD price', () => {
    const { tick } = poolPriceFromUsd(3000, 1, 18, 6);
    const human = 1.0001 ** tick * 10 ** (18 - 6);
    expect(Math.abs(human / 3000 - 1)).toBeLessThan(2e-4);
  });
});
