import { MAX_UINT128, mulDiv, Q96 } from './full-math.js';

/**
 * Port of Uniswap v3-periphery LiquidityAmounts (same argument order, same floor rounding).
 * Sqrt prices are Q64.96 bigints; A and B are the range bounds in either order.
 */

export interface TokenAmounts {
  amount0: bigint;
  amount1: bigint;
}

function ordered(a: bigint, b: bigint): [bigint, bigint] {
  return a > b ? [b, a] : [a, b];
}

function toUint128(x: bigint): bigint {
  if (x > MAX_UINT128) throw new RangeError('liquidity overflows uint128');
  return x;
}

export function getLiquidityForAmount0(sqrtA: bigint, sqrtB: bigint, amount0: bigint): bigint {
  const [a, b] = ordered(sqrtA, sqrtB);
  const intermediate = mulDiv(a, b, Q96);
  return toUint128(mulDiv(amount0, intermediate, b - a));
}

export function getLiquidityForAmount1(sqrtA: bigint, sqrtB: bigint, amount1: bigint): bigint {
  const [a, b] = ordered(sqrtA, sqrtB);
  return toUint128(mulDiv(amount1, Q96, b - a));
}

/** The most liquidity that amount0 and amount1 can both fund at the current price. */
export function getLiquidityForAmounts(
  sqrtPriceX96: bigint,
  sqrtA: bigint,
  sqrtB: bigint,
  amount0: bigint,
  amount1: bigint,
): bigint {
  const [a, b] = ordered(sqrtA, sqrtB);
  if (sqrtPriceX96 <= a) return getLiquidityForAmount0(a, b, amount0);
  if (sqrtPriceX96 < b) {
    const l0 = getLiquidityForAmount0(sqrtPriceX96, b, amount0);
    const l1 = getLiquidityForAmount1(a, sqrtPriceX96, amount1);
    // biome-ignore lint/complexity/useMathMinMax: bigint operands (Math.min takes numbers)
    return l0 < l1 ? l0 : l1;
  }
  return getLiquidityForAmount1(a, b, amount1);
}

export function getAmount0ForLiquidity(sqrtA: bigint, sqrtB: bigint, liquidity: bigint): bigint {
  return sqrtA > sqrtB ? amount0(sqrtB, sqrtA, liquidity) : amount0(sqrtA, sqrtB, liquidity);
}

export function getAmount1ForLiquidity(sqrtA: bigint, sqrtB: bigint, liquidity: bigint): bigint {
  return sqrtA > sqrtB ? amount1(sqrtB, sqrtA, liquidity) : amount1(sqrtA, sqrtB, liquidity);
}

/** The periphery's amount0 for a ≤ b (no pair array: the fold values every position this way). */
function amount0(a: bigint, b: bigint, liquidity: bigint): bigint {
  return mulDiv(liquidity << 96n, b - a, b) / a;
}

/** The periphery's amount1 for a ≤ b: L·(b − a) / 2^96, floor (a shift: both are ≥ 0). */
function amount1(a: bigint, b: bigint, liquidity: bigint): bigint {
  return (liquidity * (b - a)) >> 96n;
}

/** Token amounts held by `liquidity` in [A, B] at the current price (floor, as the periphery). */
export function getAmountsForLiquidity(
  sqrtPriceX96: bigint,
  sqrtA: bigint,
  sqrtB: bigint,
  liquidity: bigint,
): TokenAmounts {
  const a = sqrtA > sqrtB ? sqrtB : sqrtA;
  const b = sqrtA > sqrtB ? sqrtA : sqrtB;
  if (sqrtPriceX96 <= a) return { amount0: amount0(a, b, liquidity), amount1: 0n };
  if (sqrtPriceX96 < b) {
    return { amount0: amount0(sqrtPriceX96, b, liquidity), amount1: amount1(a, sqrtPriceX96, liquidity) };
  }
  return { amount0: 0n, amount1: amount1(a, b, liquidity) };
}
