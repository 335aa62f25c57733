/**
 * Uncollected fees of a Uniswap v3 position, as the pool computes them (v3-core
 * Tick.getFeeGrowthInside and Position.update). All fee growth values are Q128.128 and wrap
 * modulo 2^256, exactly as the Solidity (0.7, unchecked) arithmetic does.
 */
const MOD = 1n << 256n;
const Q128 = 1n << 128n;
/** tokensOwed is a uint128 in the pool; Position.update lets it overflow (wrap) by design. */
const MAX_UINT128 = Q128 - 1n;

const sub = (a: bigint, b: bigint) => (((a - b) % MOD) + MOD) % MOD;

export interface TickFeeGrowth {
  feeGrowthOutside0X128: bigint;
  feeGrowthOutside1X128: bigint;
}

export interface PositionFeeState {
  liquidity: bigint;
  feeGrowthInside0LastX128: bigint;
  feeGrowthInside1LastX128: bigint;
  tokensOwed0: bigint;
  tokensOwed1: bigint;
}

/** Tick.getFeeGrowthInside: fee growth per unit of liquidity inside [lower, upper). */
export function feeGrowthInside(
  tickCurrent: number,
  tickLower: number,
  tickUpper: number,
  lower: TickFeeGrowth,
  upper: TickFeeGrowth,
  feeGrowthGlobal0X128: bigint,
  feeGrowthGlobal1X128: bigint,
): [bigint, bigint] {
  const below0 =
    tickCurrent >= tickLower
      ? lower.feeGrowthOutside0X128
      : sub(feeGrowthGlobal0X128, lower.feeGrowthOutside0X128);
  const below1 =
    tickCurrent >= tickLower
      ? lower.feeGrowthOutside1X128
      : sub(feeGrowthGlobal1X128, lower.feeGrowthOutside1X128);
  const above0 =
    tickCurrent < tickUpper
      ? upper.feeGrowthOutside0X128
      : sub(feeGrowthGlobal0X128, upper.feeGrowthOutside0X128);
  const above1 =
    tickCurrent < tickUpper
      ? upper.feeGrowthOutside1X128
      : sub(feeGrowthGlobal1X128, upper.feeGrowthOutside1X128);
  return [sub(sub(feeGrowthGlobal0X128, below0), above0), sub(sub(feeGrowthGlobal1X128, below1), above1)];
}

/**
 * What `collect` would pay after a zero-liquidity burn: tokensOwed plus
 * liquidity · (inside − insideLast) / 2^128 (floor), per token, wrapped to uint128 as the pool does.
 */
export function owedTokens(position: PositionFeeState, inside0: bigint, inside1: bigint): [bigint, bigint] {
  const fees0 = (sub(inside0, position.feeGrowthInside0LastX128) * position.liquidity) / Q128;
  const fees1 = (sub(inside1, position.feeGrowthInside1LastX128) * position.liquidity) / Q128;
  return [(position.tokensOwed0 + fees0) & MAX_UINT128, (position.tokensOwed1 + fees1) & MAX_UINT128];
}
