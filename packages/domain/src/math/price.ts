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

/** The next double below `x` (x finite and > 0): one unit in the last place less. */
function nextDown(x: number): number {
  const f = new Float64Array([x]);
  const bits = new BigInt64Array(f.buffer);
  bits[0]! -= 1n;
  return f[0]!;
}

/** A position's served range: human prices of token0 in token1. */
export interface RangePrices {
  lower: number;
  upper: number;
  current: number;
}

/**
 * A position's range as served, every price from an exact sqrt ratio (the ticks' own,
 * `getSqrtRatioAtTick`, and the pool's sqrtPriceX96), so the three are one scale: lower < upper,
 * and `lower ≤ current < upper` exactly when the pool rule says in range (`isInRange` of the
 * pool's tick). The pool's tick and its sqrt price can put `current` a unit in the last place on
 * the other side of a bound — a price within a double's rounding of the bound, or a swap ending
 * exactly on a tick, which leaves the tick one below it — and then `current` is shown at the
 * nearest double on the side the tick puts it: the displayed figures never contradict `inRange`.
 */
export function rangePrices(
  pool: { sqrtPriceX96: bigint; tick: number },
  p: { tickLower: number; tickUpper: number; sqrtLower: bigint; sqrtUpper: bigint },
  decimals0: number,
  decimals1: number,
): RangePrices {
  const lower = sqrtPriceX96ToPrice(p.sqrtLower, decimals0, decimals1);
  const upper = sqrtPriceX96ToPrice(p.sqrtUpper, decimals0, decimals1);
  let current = sqrtPriceX96ToPrice(pool.sqrtPriceX96, decimals0, decimals1);
  if (pool.tick < p.tickLower) current = Math.min(current, nextDown(lower));
  else if (pool.tick >= p.tickUpper) current = Math.max(current, upper);
  else current = Math.min(Math.max(current, lower), nextDown(upper));
  return { lower, upper, current };
}

/** Pool rule: a position is in range iff tickLower ≤ tick < tickUpper. */
export function isInRange(tick: number, tickLower: number, tickUpper: number): boolean {
  return tickLower <= tick && tick < tickUpper;
}
