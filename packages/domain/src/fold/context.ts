import { divRound, parseFixed, pow10 } from '../math/fixed.js';
import { MAX_SQRT_RATIO, MIN_SQRT_RATIO } from '../math/tick-math.js';
import type { ValuationContext } from '../records/context.js';
import { FoldError } from './errors.js';
import type { Address, PoolMark, TokenMark, VaultState } from './state.js';

export type Draft = { -readonly [K in keyof VaultState]: VaultState[K] };

/**
 * Merges a record's context into the draft before its payload is applied: prices and pool slot0
 * are updated for every listed token/pool (unlisted ones keep their last mark), and each price
 * change of a token in the benchmark basket adds H·ΔP to marketDeltaUsd. Maps are copied only
 * when something changed.
 */
export function applyContext(d: Draft, ctx: ValuationContext): void {
  let tokens: Record<Address, TokenMark> | null = null;
  for (const t of ctx.tokens) {
    const prev = d.tokens[t.address];
    if (prev && prev.decimals !== t.decimals) {
      throw new FoldError(
        'decimals-changed',
        `token ${t.address} had ${prev.decimals} decimals, now ${t.decimals}`,
      );
    }
    if (prev && prev.priceUsd === t.priceUsd && prev.symbol === t.symbol) continue;
    const price = parseFixed(t.priceUsd);
    if (prev && price !== prev.price) {
      const h = d.benchmark[t.address];
      if (h) d.marketDeltaUsd += divRound(h * (price - prev.price), pow10(t.decimals + 18));
    }
    tokens ??= { ...d.tokens };
    tokens[t.address] = { symbol: t.symbol, decimals: t.decimals, priceUsd: t.priceUsd, price };
  }
  if (tokens) d.tokens = tokens;

  let pools: Record<Address, PoolMark> | null = null;
  for (const p of ctx.pools) {
    const sqrtPriceX96 = BigInt(p.sqrtPriceX96);
    if (sqrtPriceX96 < MIN_SQRT_RATIO || sqrtPriceX96 > MAX_SQRT_RATIO) {
      throw new FoldError(
        'invalid-pool-price',
        `pool ${p.address} sqrtPriceX96 ${p.sqrtPriceX96} out of range`,
      );
    }
    const prev = d.pools[p.address];
    if (prev && prev.sqrtPriceX96 === sqrtPriceX96 && prev.tick === p.tick && prev.venue === p.venue)
      continue;
    pools ??= { ...d.pools };
    pools[p.address] = {
      venue: p.venue,
      feeTier: p.feeTier,
      sqrtPriceX96,
      tick: p.tick,
      token0: p.token0,
      token1: p.token1,
    };
  }
  if (pools) d.pools = pools;
}

/** The payload's token must be listed in this record's context (so it is valued at this block). */
export function requireContextToken(ctx: ValuationContext, token: Address): void {
  for (const t of ctx.tokens) if (t.address === token) return;
  throw new FoldError('unknown-token', `token ${token} is not in the record's context`);
}

/** map[key] += delta, dropping zero entries; throws `reason` if the result would be negative. */
export function adjust(
  map: Readonly<Record<Address, bigint>>,
  key: Address,
  delta: bigint,
  reason: 'insufficient-idle' | 'insufficient-pending',
): Readonly<Record<Address, bigint>> {
  if (delta === 0n) return map;
  const next = (map[key] ?? 0n) + delta;
  if (next < 0n) {
    throw new FoldError(reason, `${key}: holds ${map[key] ?? 0n}, needs ${-delta}`);
  }
  const copy = { ...map };
  if (next === 0n) delete copy[key];
  else copy[key] = next;
  return copy;
}
