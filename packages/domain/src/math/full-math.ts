/** Uniswap v3 FullMath on bigint: exact, no 512-bit overflow concerns. Inputs are non-negative. */
export function mulDiv(a: bigint, b: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('mulDiv: denominator must be positive');
  return (a * b) / denominator;
}

export const Q96 = 1n << 96n;
export const Q128 = 1n << 128n;
export const MAX_UINT128 = Q128 - 1n;
export const MAX_UINT256 = (1n << 256n) - 1n;
