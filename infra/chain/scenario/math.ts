/**
 * Price helpers of the scenario driver. The Uniswap v3 math itself is the domain's (the same
 * functions the fold values positions with), so the amounts the driver emits are exactly the
 * amounts the fold derives from liquidity.
 */
import { getSqrtRatioAtTick } from '@vault-yield/domain';

export {
  getAmountsForLiquidity,
  getLiquidityForAmounts,
  getSqrtRatioAtTick,
  MAX_TICK,
  MIN_TICK,
  Q96,
} from '@vault-yield/domain';

/**
 * Pool tick and sqrtPriceX96 for USD prices: raw price (token1 units per token0 unit) =
 * usd0/usd1 · 10^(dec1 − dec0). The tick is floor(log_1.0001(raw)) and sqrtPriceX96 is that
 * tick's exact ratio, so slot0 satisfies the v3 invariant getSqrtRatioAtTick(tick) ≤ sqrtP.
 */
export function poolPriceFromUsd(
  usd0: number,
  usd1: number,
  dec0: number,
  dec1: number,
): { tick: number; sqrtPriceX96: bigint } {
  const raw = (usd0 / usd1) * 10 ** (dec1 - dec0);
  let tick = Math.floor(Math.log(raw) / Math.log(1.0001));
  // Guard float error at exact tick boundaries.
  if (1.0001 ** (tick + 1) <= raw) tick += 1;
  if (1.0001 ** tick > raw) tick -= 1;
  return { tick, sqrtPriceX96: getSqrtRatioAtTick(tick) };
}

/** Nearest usable tick at or below `tick` for a spacing. */
export function floorTick(tick: number, spacing: number): number {
  return Math.floor(tick / spacing) * spacing;
}

/** Integer square root (floor) of a non-negative bigint. */
export function isqrt(n: bigint): bigint {
  if (n < 0n) throw new Error('isqrt of a negative number');
  if (n < 2n) return n;
  // Newton from above: start at a power of two ≥ √n, stop when the iterate stops shrinking.
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2));
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/**
 * The pool's sqrtPriceX96 for two feed answers (same feed decimals): raw price = answer0 ·
 * 10^dec1 / (answer1 · 10^dec0) token1 units per token0 unit, sqrtPriceX96 = ⌊√(raw · 2^192)⌋.
 */
export function sqrtPriceX96FromAnswers(
  answer0: bigint,
  answer1: bigint,
  dec0: number,
  dec1: number,
): bigint {
  return isqrt((answer0 * 10n ** BigInt(dec1) * (1n << 192n)) / (answer1 * 10n ** BigInt(dec0)));
}
