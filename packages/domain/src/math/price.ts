import { Q96 } from './full-math.js';

/**
 * Human prices for display (JS numbers): the price of one whole token0 in whole token1,
 * 1.0001^tick · 10^(dec0 − dec1). Never used for accounting (the fold values in bigint).
 */
export function tickToPrice(tick: number, decimals0: number, decimals1: number): number {
  return 1.0001 ** tick * 10 ** (decimals0 - decimals1);
}

/** (sqrtPriceX96 / 2^96)^2 · 10^(dec0 − dec1), relative error ~1e-15. */
export function sqrtPriceX96ToPrice(sqrtPriceX96: bigint, decimals0: number, decimals1: number): number {
  // split into integer and fractional parts of the Q96 value to keep precision at both ends
  const int = sqrtPriceX96 / Q96;
  const frac = Number(sqrtPriceX96 % Q96) / Number(Q96);
  const sqrt = Number(int) + frac;
  return sqrt * sqrt * 10 ** (decimals0 - decimals1);
}

/** Pool rule: a position is in range iff tickLower ≤ tick < tickUpper. */
export function isInRange(tick: number, tickLower: number, tickUpper: number): boolean {
  return tickLower <= tick && tick < tickUpper;
}
