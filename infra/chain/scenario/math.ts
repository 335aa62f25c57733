/**
 * Uniswap v3 price math in bigint (v3-core TickMath.getSqrtRatioAtTick, v3-periphery
 * LiquidityAmounts), written locally for the scenario driver so it does not depend on the domain.
 */
export const Q96 = 1n << 96n;
export const MIN_TICK = -887272;
export const MAX_TICK = 887272;
const MAX_UINT256 = (1n << 256n) - 1n;

const TICK_FACTORS: [number, bigint][] = [
  [0x2, 0xfff97272373d413259a46990580e213an],
  [0x4, 0xfff2e50f5f656932ef12357cf3c7fdccn],
  [0x8, 0xffe5caca7e10e4e61c3624eaa0941cd0n],
  [0x10, 0xffcb9843d60f6159c9db58835c926644n],
  [0x20, 0xff973b41fa98c081472e6896dfb254c0n],
  [0x40, 0xff2ea16466c96a3843ec78b326b52861n],
  [0x80, 0xfe5dee046a99a2a811c461f1969c3053n],
  [0x100, 0xfcbe86c7900a88aedcffc83b479aa3a4n],
  [0x200, 0xf987a7253ac413176f2b074cf7815e54n],
  [0x400, 0xf3392b0822b70005940c7a398e4b70f3n],
  [0x800, 0xe7159475a2c29b7443b29c7fa6e889d9n],
  [0x1000, 0xd097f3bdfd2022b8845ad8f792aa5825n],
  [0x2000, 0xa9f746462d870fdf8a65dc1f90e061e5n],
  [0x4000, 0x70d869a156d2a1b890bb3df62baf32f7n],
  [0x8000, 0x31be135f97d08fd981231505542fcfa6n],
  [0x10000, 0x9aa508b5b7a84e1c677de54f3e99bc9n],
  [0x20000, 0x5d6af8dedb81196699c329225ee604n],
  [0x40000, 0x2216e584f5fa1ea926041bedfe98n],
  [0x80000, 0x48a170391f7dc42444e8fa2n],
];

/** sqrt(1.0001^tick) · 2^96, rounded up as in TickMath. */
export function getSqrtRatioAtTick(tick: number): bigint {
  if (!Number.isInteger(tick) || tick < MIN_TICK || tick > MAX_TICK) throw new RangeError(`tick ${tick}`);
  const abs = Math.abs(tick);
  let ratio = abs & 0x1 ? 0xfffcb933bd6fad37aa2d162d1a594001n : 0x100000000000000000000000000000000n;
  for (const [bit, factor] of TICK_FACTORS) if (abs & bit) ratio = (ratio * factor) >> 128n;
  if (tick > 0) ratio = MAX_UINT256 / ratio;
  return (ratio >> 32n) + (ratio % (1n << 32n) === 0n ? 0n : 1n);
}

export function getAmount0ForLiquidity(sa: bigint, sb: bigint, liquidity: bigint): bigint {
  if (sa > sb) [sa, sb] = [sb, sa];
  return ((liquidity << 96n) * (sb - sa)) / sb / sa;
}

export function getAmount1ForLiquidity(sa: bigint, sb: bigint, liquidity: bigint): bigint {
  if (sa > sb) [sa, sb] = [sb, sa];
  return (liquidity * (sb - sa)) / Q96;
}

/** Token amounts held by `liquidity` between sa and sb at price sp (all sqrtPriceX96). */
export function getAmountsForLiquidity(
  sp: bigint,
  sa: bigint,
  sb: bigint,
  liquidity: bigint,
): { amount0: bigint; amount1: bigint } {
  if (sa > sb) [sa, sb] = [sb, sa];
  if (sp <= sa) return { amount0: getAmount0ForLiquidity(sa, sb, liquidity), amount1: 0n };
  if (sp < sb) {
    return {
      amount0: getAmount0ForLiquidity(sp, sb, liquidity),
      amount1: getAmount1ForLiquidity(sa, sp, liquidity),
    };
  }
  return { amount0: 0n, amount1: getAmount1ForLiquidity(sa, sb, liquidity) };
}

function liquidityForAmount0(sa: bigint, sb: bigint, amount0: bigint): bigint {
  if (sa > sb) [sa, sb] = [sb, sa];
  return (amount0 * ((sa * sb) / Q96)) / (sb - sa);
}

function liquidityForAmount1(sa: bigint, sb: bigint, amount1: bigint): bigint {
  if (sa > sb) [sa, sb] = [sb, sa];
  return (amount1 * Q96) / (sb - sa);
}

/** The most liquidity amount0/amount1 can fund between sa and sb at price sp. */
export function getLiquidityForAmounts(
  sp: bigint,
  sa: bigint,
  sb: bigint,
  amount0: bigint,
  amount1: bigint,
): bigint {
  if (sa > sb) [sa, sb] = [sb, sa];
  if (sp <= sa) return liquidityForAmount0(sa, sb, amount0);
  if (sp < sb) {
    const l0 = liquidityForAmount0(sp, sb, amount0);
    const l1 = liquidityForAmount1(sa, sp, amount1);
    // biome-ignore lint/complexity/useMathMinMax: bigint operands (Math.min takes numbers)
    return l0 < l1 ? l0 : l1;
  }
  return liquidityForAmount1(sa, sb, amount1);
}

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
