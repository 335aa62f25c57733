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
