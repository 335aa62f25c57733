import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Q96 } from './full-math.js';
import {
  getAmountsForLiquidity,
  getLiquidityForAmount0,
  getLiquidityForAmount1,
  getLiquidityForAmounts,
} from './liquidity-amounts.js';
import { getSqrtRatioAtTick } from './tick-math.js';

const encodePriceSqrt = (reserve1: bigint, reserve0: bigint): bigint => {
  // floor(sqrt(reserve1/reserve0) · 2^96) by integer Newton iteration
  const n = (reserve1 << 192n) / reserve0;
  let x = n;
  let y = (x + 1n) / 2n;
  while (y < x) {
    x = y;
    y = (x + n / x) / 2n;
  }
  return x;
};

describe('LiquidityAmounts (v3-periphery vectors)', () => {
  const p1 = encodePriceSqrt(1n, 1n);
  const a = encodePriceSqrt(100n, 110n);
  const b = encodePriceSqrt(110n, 100n);

  it('getLiquidityForAmounts: price inside, below, above', () => {
    expect(getLiquidityForAmounts(p1, a, b, 100n, 200n)).toBe(2148n);
    expect(getLiquidityForAmounts(encodePriceSqrt(99n, 110n), a, b, 100n, 200n)).toBe(1048n);
    expect(getLiquidityForAmounts(encodePriceSqrt(111n, 100n), a, b, 100n, 200n)).toBe(2097n);
    expect(getLiquidityForAmounts(a, a, b, 100n, 200n)).toBe(1048n);
    expect(getLiquidityForAmounts(b, a, b, 100n, 200n)).toBe(2097n);
  });

  it('getAmountsForLiquidity: price inside, below, above, on the edges', () => {
    expect(getAmountsForLiquidity(p1, a, b, 2148n)).toEqual({ amount0: 99n, amount1: 99n });
    expect(getAmountsForLiquidity(encodePriceSqrt(99n, 110n), a, b, 1048n)).toEqual({
      amount0: 99n,
      amount1: 0n,
    });
    expect(getAmountsForLiquidity(encodePriceSqrt(111n, 100n), a, b, 2097n)).toEqual({
      amount0: 0n,
      amount1: 199n,
    });
    expect(getAmountsForLiquidity(a, a, b, 1048n)).toEqual({ amount0: 99n, amount1: 0n });
    expect(getAmountsForLiquidity(b, a, b, 2097n)).toEqual({ amount0: 0n, amount1: 199n });
  });

  it('accepts the bounds in either order', () => {
    expect(getAmountsForLiquidity(p1, b, a, 2148n)).toEqual(getAmountsForLiquidity(p1, a, b, 2148n));
    expect(getLiquidityForAmount0(b, a, 100n)).toBe(getLiquidityForAmount0(a, b, 100n));
    expect(getLiquidityForAmount1(b, a, 100n)).toBe(getLiquidityForAmount1(a, b, 100n));
  });

  it('liquidity → amounts → liquidity round-trips within one wei of the binding token', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -200_000, max: 200_000 }),
        fc.integer({ min: 1, max: 20_000 }),
        fc.integer({ min: 1, max: 20_000 }),
        fc.integer({ min: -25_000, max: 25_000 }),
        fc.bigInt({ min: 10n ** 12n, max: 10n ** 27n }),
        (base, w1, w2, dp, liquidity) => {
          const sa = getSqrtRatioAtTick(base - w1);
          const sb = getSqrtRatioAtTick(base + w2);
          const sp = getSqrtRatioAtTick(base + dp);
          const amounts = getAmountsForLiquidity(sp, sa, sb, liquidity);
          const l2 = getLiquidityForAmounts(sp, sa, sb, amounts.amount0, amounts.amount1);
          // liquidity that one wei of each side funds at this price
          // biome-ignore lint/complexity/useMathMinMax: bigint operands
          const perWei0 = sp < sb ? getLiquidityForAmount0(sp > sa ? sp : sa, sb, 1n) : 0n;
          // biome-ignore lint/complexity/useMathMinMax: bigint operands
          const perWei1 = sp > sa ? getLiquidityForAmount1(sa, sp < sb ? sp : sb, 1n) : 0n;
          const oneWei = perWei0 > perWei1 ? perWei0 : perWei1;
          expect(l2).toBeLessThanOrEqual(liquidity);
          // amount0 is up to 2 wei short (two floors), each costing up to `oneWei` of liquidity; the
          // floored a·b/Q96 intermediate adds a relative error far below 1e-18
          expect(liquidity - l2).toBeLessThanOrEqual(2n * oneWei + 4n + liquidity / 10n ** 18n);
          // amounts differ by what that liquidity holds: each amount is within 2 wei below the exact
          // real value (two floors for amount0), so the integer gap is < slack + 4
          const back = getAmountsForLiquidity(sp, sa, sb, l2);
          const slack = getAmountsForLiquidity(sp, sa, sb, liquidity - l2);
          expect(back.amount0).toBeLessThanOrEqual(amounts.amount0);
          expect(back.amount1).toBeLessThanOrEqual(amounts.amount1);
          expect(amounts.amount0 - back.amount0).toBeLessThanOrEqual(slack.amount0 + 3n);
          expect(amounts.amount1 - back.amount1).toBeLessThanOrEqual(slack.amount1 + 3n);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('amounts → liquidity never spends more than supplied', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -200_000, max: 200_000 }),
        fc.integer({ min: 1, max: 20_000 }),
        fc.integer({ min: 1, max: 20_000 }),
        fc.integer({ min: -25_000, max: 25_000 }),
        fc.bigInt({ min: 0n, max: 10n ** 24n }),
        fc.bigInt({ min: 0n, max: 10n ** 24n }),
        (base, w1, w2, dp, amount0, amount1) => {
          const sa = getSqrtRatioAtTick(base - w1);
          const sb = getSqrtRatioAtTick(base + w2);
          const sp = getSqrtRatioAtTick(base + dp);
          const out = getAmountsForLiquidity(
            sp,
            sa,
            sb,
            getLiquidityForAmounts(sp, sa, sb, amount0, amount1),
          );
          expect(out.amount0).toBeLessThanOrEqual(amount0);
          expect(out.amount1).toBeLessThanOrEqual(amount1);
        },
      ),
    );
  });

  it('position value is continuous across the range edges', () => {
    const sa = getSqrtRatioAtTick(-60);
    const sb = getSqrtRatioAtTick(60);
    const l = 10n ** 18n;
    const at = getAmountsForLiquidity(sa, sa, sb, l);
    const justAbove = getAmountsForLiquidity(sa + 1n, sa, sb, l);
    expect(at.amount0 - justAbove.amount0).toBeLessThanOrEqual(1n);
    expect(justAbove.amount1).toBeLessThanOrEqual(1n);
    expect(getAmountsForLiquidity(Q96 * 2n, sa, sb, l).amount0).toBe(0n);
  });
});
