import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { feeGrowthInside, owedTokens } from './fee-growth.js';

const MOD = 1n << 256n;
const Q128 = 1n << 128n;
const u256 = fc.bigInt({ min: 0n, max: MOD - 1n });

describe('fee growth (v3-core Tick.getFeeGrowthInside, Position.update)', () => {
  it('inside = global − below − above, by where the current tick sits', () => {
    const lower = { feeGrowthOutside0X128: 10n, feeGrowthOutside1X128: 20n };
    const upper = { feeGrowthOutside0X128: 3n, feeGrowthOutside1X128: 4n };
    // in range: below = lower.outside, above = upper.outside
    expect(feeGrowthInside(5, 0, 10, lower, upper, 100n, 200n)).toEqual([87n, 176n]);
    // below the range: below = global − lower.outside, above = upper.outside
    expect(feeGrowthInside(-5, 0, 10, lower, upper, 100n, 200n)).toEqual([
      (100n - 90n - 3n + MOD) % MOD,
      (200n - 180n - 4n + MOD) % MOD,
    ]);
    // at the upper tick the position is out of range (tick < upper fails)
    expect(feeGrowthInside(10, 0, 10, lower, upper, 100n, 200n)).toEqual(
      [100n - 10n - 97n + MOD, 200n - 20n - 196n + MOD].map((x) => x % MOD),
    );
  });

  it('wraps modulo 2^256 like the unchecked Solidity arithmetic', () => {
    fc.assert(
      fc.property(
        u256,
        u256,
        u256,
        u256,
        u256,
        fc.integer({ min: -100, max: 100 }),
        (g, lo0, up0, lo1, up1, tick) => {
          const [a, b] = feeGrowthInside(
            tick,
            -10,
            10,
            { feeGrowthOutside0X128: lo0, feeGrowthOutside1X128: lo1 },
            { feeGrowthOutside0X128: up0, feeGrowthOutside1X128: up1 },
            g,
            g,
          );
          expect(a >= 0n && a < MOD && b >= 0n && b < MOD).toBe(true);
        },
      ),
    );
  });

  it('owed = tokensOwed + L·(inside − last)/2^128, floor, across a wrap of the growth counter', () => {
    const pos = {
      liquidity: 3n * 10n ** 18n,
      feeGrowthInside0LastX128: MOD - Q128,
      feeGrowthInside1LastX128: 0n,
      tokensOwed0: 7n,
      tokensOwed1: 0n,
    };
    // inside0 wrapped past 2^256: the delta is 2·2^128 per unit of liquidity
    const [o0, o1] = owedTokens(pos, Q128, Q128 / 2n);
    expect(o0).toBe(7n + 2n * 3n * 10n ** 18n);
    expect(o1).toBe((3n * 10n ** 18n) / 2n);
  });
});
