import { divRoundPow10, parseFixed } from '../math/fixed.js';
import { getSqrtRatioAtTick, MAX_SQRT_RATIO, MIN_SQRT_RATIO } from '../math/tick-math.js';
import type { TokenAmount, ValuationContext } from '../records/context.js';
import { FoldError } from './errors.js';
import {
  type Address,
  type PoolPrice,
  type Position,
  positionList,
  type TokenPrice,
  type VaultState,
} from './state.js';

export type Draft = { -readonly [K in keyof VaultState]: VaultState[K] };

/**
 * Merges a record's context into the draft before its payload is applied: prices and pool slot0
 * are updated for every listed token/pool (unlisted ones keep their last mark), and each price
 * change of a token in the benchmark basket adds H·ΔP to marketDeltaUsd. Maps are copied only
 * when something changed.
 */
export function applyContext(d: Draft, ctx: ValuationContext): void {
  let tokens: Record<Address, TokenPrice> | null = null;
  for (const t of ctx.tokens) {
    const prev = d.tokens[t.address];
    if (prev && prev.decimals !== t.decimals) {
      throw new FoldError(
        'decimals-changed',
        `token ${t.address} had ${prev.decimals} decimals, now ${t.decimals}`,
      );
    }
    if (
      prev &&
      !prev.priceInvalid &&
      prev.priceUsd === t.priceUsd &&
      prev.symbol === t.symbol &&
      prev.priceUpdatedAt === t.priceUpdatedAt &&
      prev.feed === t.feed &&
      prev.heartbeat === t.heartbeat
    )
      continue;
    const parsed = prev && prev.priceUsd === t.priceUsd ? prev.price : parseFixed(t.priceUsd);
    // A feed answering zero or less gave no price ("0" in the record): the last valid one stays.
    const invalid = parsed === 0n;
    const kept = invalid && prev !== undefined;
    if (
      kept &&
      prev.priceInvalid &&
      prev.symbol === t.symbol &&
      prev.feed === t.feed &&
      prev.heartbeat === t.heartbeat
    )
      continue;
    const price = kept ? prev.price : parsed;
    // A token's first valid price (its previous one was never valid: 0) is no market move: the
    // basket holds nothing of it (its flows waited for this price, evolve.ts `bookUnpriced`).
    if (prev && price !== prev.price && prev.price !== 0n) {
      const h = d.benchmark[t.address];
      if (h) d.marketDeltaUsd += divRoundPow10(h * (price - prev.price), t.decimals + 18);
    }
    tokens ??= { ...d.tokens };
    tokens[t.address] = {
      symbol: t.symbol,
      decimals: t.decimals,
      priceUsd: kept ? prev.priceUsd : t.priceUsd,
      price,
      feed: t.feed,
      priceUpdatedAt: kept ? prev.priceUpdatedAt : t.priceUpdatedAt,
      heartbeat: t.heartbeat,
      priceInvalid: invalid,
    };
  }
  if (tokens) d.tokens = tokens;

  let pools: Record<Address, PoolPrice> | null = null;
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

/**
 * Raw amounts by token, zero entries dropped; every token must be priced by the context. `prev`
 * when equal entry for entry (unchanged maps stay shared between states): checked before a map is
 * built, so the usual record (its balances as at the block before) allocates none.
 */
function amountMap(
  ctx: ValuationContext,
  list: readonly TokenAmount[],
  prev: Readonly<Record<Address, bigint>>,
): Readonly<Record<Address, bigint>> {
  let same = list.length === keyCount(prev);
  for (let i = 0; same && i < list.length; i++) {
    const a = list[i]!;
    // A token listed twice (summed) or a zero entry (dropped) takes the general path below.
    same = prev[a.token] !== undefined && prev[a.token] === BigInt(a.amount);
    for (let j = 0; same && j < i; j++) same = list[j]!.token !== a.token;
  }
  if (same) {
    for (const a of list) requireContextToken(ctx, a.token);
    return prev;
  }
  const out: Record<Address, bigint> = {};
  for (const a of list) {
    requireContextToken(ctx, a.token);
    const raw = BigInt(a.amount) + (out[a.token] ?? 0n);
    if (raw === 0n) delete out[a.token];
    else out[a.token] = raw;
  }
  return sameOr(prev, out);
}

/**
 * The chain's truth at the record's block replaces what the vault holds: balances, pending
 * rewards and live positions (liquidity and owed tokens) all come from the context's holdings.
 * Position ticks and sqrt ratios are kept from the previous state when unchanged.
 */
export function applyHoldings(d: Draft, ctx: ValuationContext): void {
  const h = ctx.holdings;
  d.idle = amountMap(ctx, h.balances, d.idle);
  d.pendingRewards = amountMap(ctx, h.pendingRewards, d.pendingRewards);
  // Built only once something differs (the usual record's positions are the block before's).
  let positions: Record<string, Position> | null =
    h.positions.length !== positionList(d.positions).length ? {} : null;
  for (let i = 0; i < h.positions.length; i++) {
    const p = h.positions[i]!;
    const pool = ctx.pools.find((x) => x.address === p.pool);
    if (!pool) throw new FoldError('unknown-pool', `position ${p.id}: pool ${p.pool} is not in the context`);
    requireContextToken(ctx, pool.token0);
    requireContextToken(ctx, pool.token1);
    const prev = d.positions[p.id];
    const same = prev && prev.tickLower === p.tickLower && prev.tickUpper === p.tickUpper;
    const liquidity = BigInt(p.liquidity);
    const owed0 = BigInt(p.owed0);
    const owed1 = BigInt(p.owed1);
    if (
      same &&
      prev.pool === p.pool &&
      prev.liquidity === liquidity &&
      prev.owed0 === owed0 &&
      prev.owed1 === owed1
    ) {
      if (positions) positions[p.id] = prev;
      continue;
    }
    if (!positions) {
      positions = {};
      for (let j = 0; j < i; j++) {
        const id = h.positions[j]!.id;
        positions[id] = d.positions[id]!;
      }
    }
    positions[p.id] = {
      id: p.id,
      pool: p.pool,
      token0: pool.token0,
      token1: pool.token1,
      tickLower: p.tickLower,
      tickUpper: p.tickUpper,
      sqrtLower: same ? prev.sqrtLower : getSqrtRatioAtTick(p.tickLower),
      sqrtUpper: same ? prev.sqrtUpper : getSqrtRatioAtTick(p.tickUpper),
      liquidity,
      owed0,
      owed1,
    };
  }
  if (positions) d.positions = positions;
}

/** The previous map when equal entry for entry (unchanged maps stay shared between states). */
function sameOr(
  prev: Readonly<Record<Address, bigint>>,
  next: Record<Address, bigint>,
): Readonly<Record<Address, bigint>> {
  // Counted and compared in place (no key arrays: this runs twice for every record).
  let n = 0;
  for (const k in next) {
    if (prev[k as Address] !== next[k as Address]) return next;
    n++;
  }
  return n === keyCount(prev) ? prev : next;
}

/** A map's number of entries, counted in place (no key array: the fold asks this for every record). */
function keyCount(map: object): number {
  let n = 0;
  for (const _ in map) n++;
  return n;
}

/** map[key] += delta, dropping zero entries (a book may go negative inside a block). */
export function shift(
  map: Readonly<Record<Address, bigint>>,
  key: Address,
  delta: bigint,
): Readonly<Record<Address, bigint>> {
  if (delta === 0n) return map;
  const next = (map[key] ?? 0n) + delta;
  const copy = { ...map };
  if (next === 0n) delete copy[key];
  else copy[key] = next;
  return copy;
}
