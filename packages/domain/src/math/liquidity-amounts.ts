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
  const [a, b] = ordered(sqrtA, sqrtB);
  return mulDiv(liquidity << 96n, b - a, b) / a;
}

export function getAmount1ForLiquidity(sqrtA: bigint, sqrtB: bigint, liquidity: bigint): bigint {
  const [a, b] = ordered(sqrtA, sqrtB);
  return mulDiv(liquidity, b - a, Q96);
}

/** Token amounts held by `liquidity` in [A, B] at the current price (floor, as the periphery). */
export function getAmountsForLiquidity(
  sqrtPriceX96: bigint,
  sqrtA: bigint,
  sqrtB: bigint,
  liquidity: bigint,
): TokenAmounts {
  const [a, b] = ordered(sqrtA, sqrtB);
  if (sqrtPriceX96 <= a) return { amount0: getAmount0ForLiquidity(a, b, liquidity), amount1: 0n };
  if (sqrtPriceX96 < b) {
    return {
      amount0: getAmount0ForLiquidity(sqrtPriceX96, b, liquidity),
      amount1: getAmount1ForLiquidity(a, sqrtPriceX96, liquidity),
    };
  }
  return { amount0: 0n, amount1: getAmount1ForLiquidity(a, b, liquidity) };
}
