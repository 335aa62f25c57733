import { divRound, type Fixed, SCALE, tokenValue } from '../math/fixed.js';
import type { VaultRecord } from '../records/envelope.js';
import type { Draft } from './context.js';
import { MIN_RETURN_BASE_USD } from './return-index.js';
import {
  type Address,
  type ById,
  copyLp,
  holdsPosition,
  type LpState,
  type PositionBasket,
  positionList,
  type RangeTime,
  type StrategyLp,
  type TokenMap,
  type VaultState,
} from './state.js';
import { positionInRange } from './status.js';
import { positionAmounts } from './valuation.js';

/**
 * The LP figures (issue #46) the fold keeps beside the seed's: what LP dashboards show — the
 * vault against holding, fees earned, rewards, divergence loss, time in range, rebalances,
 * drawdown and PnL in token terms. Every one is a function of the log alone:
 * - event parts (`lpEvent`) move with each record in log order (fees collected, rewards claimed,
 *   token flows, the positions' baskets and realised divergence, rebalances) at the record's
 *   context prices, the block end's (one context a block);
 * - block parts (`lpBlockEnd`) move only at a vault's block end, from the state at its previous
 *   block end: earned fees and rewards valued at the block's prices, time in range and
 *   capital-time over the interval since, drawdown of the return index. A state inside a block
 *   never holds half of them (a batch cut moves nothing).
 * Definitions served: docs/lp-figures.md (generated into the OpenAPI description).
 */

const ONE = SCALE;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const NOTHING_BY_STRATEGY: StrategyLp = {
  feesUsd: 0n,
  rewardsUsd: 0n,
  capitalMs: 0n,
  fundedMs: 0,
  openMs: 0,
  inRangeMs: 0,
  rebalances: 0,
  divergenceUsd: 0n,
};

/*
 * `LpState.byStrategy` in the fold is kept against the running totals: the strategy in force
 * (the state's `strategy`) holds what it earned less the totals so far, every other strategy what
 * it earned. What accrues while a strategy runs then moves the totals alone — no map and no entry
 * a block — and the entries move only at a switch (or when a block that switched ends: its
 * interval counts for the strategy at its start). A function of the figures (zero entries
 * dropped on both sides), so a state read back from its JSON (`strategyFigures`, the stored
 * form) is the state that was written.
 */

/** `b` + sign × the totals of `lp` that accrue by strategy, or null when that is all zero. */
function shifted(b: StrategyLp | undefined, lp: StrategyLp, sign: 1 | -1): StrategyLp | null {
  const x = b ?? NOTHING_BY_STRATEGY;
  const n = BigInt(sign);
  const out: StrategyLp = {
    feesUsd: x.feesUsd + n * lp.feesUsd,
    rewardsUsd: x.rewardsUsd + n * lp.rewardsUsd,
    capitalMs: x.capitalMs + n * lp.capitalMs,
    fundedMs: x.fundedMs + sign * lp.fundedMs,
    openMs: x.openMs + sign * lp.openMs,
    inRangeMs: x.inRangeMs + sign * lp.inRangeMs,
    rebalances: x.rebalances + sign * lp.rebalances,
    divergenceUsd: x.divergenceUsd + n * lp.divergenceUsd,
  };
  return isNothing(out) ? null : out;
}

function isNothing(b: StrategyLp): boolean {
  return (
    b.feesUsd === 0n &&
    b.rewardsUsd === 0n &&
    b.capitalMs === 0n &&
    b.fundedMs === 0 &&
    b.openMs === 0 &&
    b.inRangeMs === 0 &&
    b.rebalances === 0 &&
    b.divergenceUsd === 0n
  );
}

function put(map: Record<string, StrategyLp>, key: string, b: StrategyLp | null): void {
  if (b) map[key] = b;
  else delete map[key];
}

/**
 * The figures each strategy earned (`LpState.byStrategy` as stored and summed by the catalogue)
 * from the fold's form, `strategy` the one in force; `sign` −1 turns the stored form back.
 */
export function strategyFigures(
  byStrategy: Readonly<Record<string, StrategyLp>>,
  lp: StrategyLp,
  strategy: string,
  sign: 1 | -1 = 1,
): Record<string, StrategyLp> {
  const out: Record<string, StrategyLp> = {};
  for (const k in byStrategy) {
    const b = k === strategy ? shifted(byStrategy[k], lp, sign) : byStrategy[k]!;
    if (b && !isNothing(b)) out[k] = b;
  }
  if (!(strategy in byStrategy)) put(out, strategy, shifted(undefined, lp, sign));
  return out;
}

/** A vault's LP figures by strategy (what the catalogue sums; see `strategyFigures`). */
export function figuresByStrategy(s: Pick<VaultState, 'lp' | 'strategy'>): Record<string, StrategyLp> {
  return s.lp ? strategyFigures(s.lp.byStrategy, s.lp, s.strategy) : {};
}

/** The record switched the strategy in force from `was`: what ran so far stays with `was`. */
function switchStrategy(d: Draft, lp: LpState, was: string): void {
  const byStrategy = { ...lp.byStrategy };
  put(byStrategy, was, shifted(lp.byStrategy[was], lp, 1));
  put(byStrategy, d.strategy, shifted(lp.byStrategy[d.strategy], lp, -1));
  const next = copyLp(lp);
  next.byStrategy = byStrategy;
  d.lp = next;
}

/**
 * A block end whose interval counts for `strategy`, no longer the one in force (the block
 * switched): what moved from `before` to `after` is that strategy's, not the running one's.
 * `after` is a fresh object of this step: written in place.
 */
function creditEarlier(before: LpState, after: Mutable<LpState>, strategy: string, running: string): void {
  const moved = shifted(after, before, -1);
  if (!moved) return;
  const byStrategy = { ...after.byStrategy };
  put(byStrategy, strategy, shifted(byStrategy[strategy], moved, 1));
  put(byStrategy, running, shifted(byStrategy[running], moved, -1));
  after.byStrategy = byStrategy;
}

type Event = Exclude<VaultRecord, { type: 'vault.created' | 'revert' }>;

/** Whether `id` is an array index: V8 enumerates such keys of an object first, ascending. */
function isIndex(id: string): boolean {
  const n = id.length;
  if (n === 0 || n > 10 || (n > 1 && id.charCodeAt(0) === 48)) return false;
  for (let i = 0; i < n; i++) {
    const c = id.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return Number(id) < 4_294_967_295;
}

/** Whether `a`, added after `b`, enumerates before it in an object holding both. */
function enumeratesBefore(a: string, b: string): boolean {
  if (!isIndex(a)) return false;
  return !isIndex(b) || Number(a) < Number(b);
}

/** The entry of `id` in a per-position list (a handful of entries: a walk). */
export function entryOf<T extends ById>(list: readonly T[], id: string): T | undefined {
  for (let i = 0; i < list.length; i++) if (list[i]!.id === id) return list[i];
  return undefined;
}

/** `list` with `entry` in place of its id's, or added where a JSON object would enumerate it. */
function withEntry<T extends ById>(list: readonly T[], entry: T): T[] {
  const out = list.slice();
  for (let i = 0; i < out.length; i++)
    if (out[i]!.id === entry.id) {
      out[i] = entry;
      return out;
    }
  let at = out.length;
  for (let i = 0; i < out.length; i++)
    if (enumeratesBefore(entry.id, out[i]!.id)) {
      at = i;
      break;
    }
  out.splice(at, 0, entry);
  return out;
}

/** A per-position list as the JSON object it is stored as (entries in the list's order). */
export function listToObject<T extends ById, V>(list: readonly T[], f: (e: T) => V): Record<string, V> {
  const out: Record<string, V> = {};
  for (const e of list) out[e.id] = f(e);
  return out;
}

/** A stored per-position object as the list the fold keeps (its enumeration order: canonical). */
export function objectToList<V, T extends ById>(
  o: Readonly<Record<string, V>>,
  f: (id: string, v: V) => T,
): T[] {
  const out: T[] = [];
  for (const id of Object.keys(o)) out.push(f(id, o[id]!));
  return out;
}

/** map[key] += delta (raw), zero entries dropped, a new map. */
function add(map: TokenMap<bigint>, key: Address, delta: bigint): TokenMap<bigint> {
  if (delta === 0n) return map;
  const next = (map[key] ?? 0n) + delta;
  const out = { ...map };
  if (next === 0n) delete out[key];
  else out[key] = next;
  return out;
}

/** USD of `raw` of `token` at the draft's prices (0 for a token that never had a valid price). */
function usd(d: Pick<VaultState, 'tokens'>, token: Address, raw: bigint): Fixed {
  const t = d.tokens[token];
  return t ? tokenValue(raw, t.decimals, t.price) : 0n;
}

/** USD of `scaled` (raw · 10^18) of `token` at the draft's prices (0 for a token never priced). */
export function scaledUsd(d: Pick<VaultState, 'tokens'>, token: Address, scaled: bigint): Fixed {
  const t = d.tokens[token];
  return t ? tokenValue(scaled, t.decimals + 18, t.price) : 0n;
}

/** USD of a basket (raw · 10^18 per token of the vault's pool) at the draft's prices. */
function basketUsd(d: Pick<VaultState, 'tokens' | 'token0' | 'token1'>, b: PositionBasket): Fixed {
  return scaledUsd(d, d.token0, b.amount0) + scaledUsd(d, d.token1, b.amount1);
}

/**
 * The event part of a record (after its payload moved the state; its context is the block's end).
 * A position's basket is what the vault put into it, in token units (× 10^18: fractional after a
 * partial decrease): a decrease realises the divergence of the part removed — what came out
 * minus what that part would be worth held — at the record's prices.
 */
export function lpEvent(d: Draft, r: Event, was: string): void {
  if (!d.lp) return;
  // Rebalances and realised divergence count for the strategy in force when they happen (the
  // one this record selected, if it did).
  if (d.strategy !== was) switchStrategy(d, d.lp, was);
  applyEvent(d, d.lp!, r);
}

function applyEvent(d: Draft, lp: LpState, r: Event): void {
  switch (r.type) {
    case 'deposit':
    case 'transfer.received': {
      const next = copyLp(lp);
      next.flowsIn = add(lp.flowsIn, r.payload.token, BigInt(r.payload.amount));
      d.lp = next;
      return;
    }
    case 'withdrawal': {
      const next = copyLp(lp);
      next.flowsOut = add(lp.flowsOut, r.payload.token, BigInt(r.payload.amount));
      d.lp = next;
      return;
    }
    case 'fees.collected': {
      const p = r.payload;
      const collected = add(add(lp.collected, d.token0, BigInt(p.amount0)), d.token1, BigInt(p.amount1));
      const next = copyLp(lp);
      next.collected = collected;
      d.lp = next;
      return;
    }
    case 'rewards.claimed': {
      const next = copyLp(lp);
      next.claimed = add(lp.claimed, r.payload.rewardToken, BigInt(r.payload.amount));
      d.lp = next;
      return;
    }
    case 'position.opened': {
      const p = r.payload;
      const next = copyLp(lp);
      next.baskets = withEntry(lp.baskets, {
        id: p.positionId,
        amount0: BigInt(p.amount0) * ONE,
        amount1: BigInt(p.amount1) * ONE,
        liquidity: BigInt(p.liquidity),
      });
      d.lp = next;
      return;
    }
    case 'position.resized': {
      const p = r.payload;
      const liquidity = BigInt(p.liquidity);
      const d0 = BigInt(p.amount0Delta);
      const d1 = BigInt(p.amount1Delta);
      const b = entryOf(lp.baskets, p.positionId);
      const next = copyLp(lp);
      if (d0 >= 0n && d1 >= 0n) {
        // Up: what the pool took joins the basket.
        next.baskets = withEntry(lp.baskets, {
          id: p.positionId,
          amount0: (b?.amount0 ?? 0n) + d0 * ONE,
          amount1: (b?.amount1 ?? 0n) + d1 * ONE,
          liquidity,
        });
      } else if (b && b.liquidity > 0n) {
        // Down: the removed share of the basket is realised against what came out.
        const removed = b.liquidity > liquidity ? b.liquidity - liquidity : 0n;
        const part = {
          amount0: divRound(b.amount0 * removed, b.liquidity),
          amount1: divRound(b.amount1 * removed, b.liquidity),
          liquidity: removed,
        };
        const out = usd(d, d.token0, -d0) + usd(d, d.token1, -d1);
        next.divergenceUsd = lp.divergenceUsd + out - basketUsd(d, part);
        next.baskets = withEntry(lp.baskets, {
          id: p.positionId,
          amount0: b.amount0 - part.amount0,
          amount1: b.amount1 - part.amount1,
          liquidity,
        });
      }
      d.lp = next;
      return;
    }
    case 'position.rebalanced': {
      const p = r.payload;
      const b = entryOf(lp.baskets, p.positionId);
      const out = usd(d, d.token0, BigInt(p.amount0Out)) + usd(d, d.token1, BigInt(p.amount1Out));
      const next = copyLp(lp);
      next.divergenceUsd = lp.divergenceUsd + (b ? out - basketUsd(d, b) : 0n);
      next.baskets = withEntry(lp.baskets, {
        id: p.positionId,
        amount0: BigInt(p.amount0In) * ONE,
        amount1: BigInt(p.amount1In) * ONE,
        liquidity: BigInt(p.liquidity),
      });
      next.rebalances = lp.rebalances + 1;
      d.lp = next;
      return;
    }
    case 'position.closed': {
      const p = r.payload;
      const b = entryOf(lp.baskets, p.positionId);
      const out = usd(d, d.token0, BigInt(p.amount0)) + usd(d, d.token1, BigInt(p.amount1));
      const next = copyLp(lp);
      next.divergenceUsd = lp.divergenceUsd + (b ? out - basketUsd(d, b) : 0n);
      next.baskets = lp.baskets.filter((x) => x.id !== p.positionId);
      d.lp = next;
      return;
    }
    case 'swap': {
      // What the swap gave up at the feeds' prices of its block, and the pool's fee in it.
      const p = r.payload;
      const paid = BigInt(p.amountIn);
      const feeTier = BigInt(d.pools[d.pool]?.feeTier ?? 0);
      const next = copyLp(lp);
      next.swaps = lp.swaps + 1;
      next.swapCostUsd = lp.swapCostUsd + usd(d, p.tokenIn, paid) - usd(d, p.tokenOut, BigInt(p.amountOut));
      next.swapFeesUsd = lp.swapFeesUsd + usd(d, p.tokenIn, divRound(paid * feeTier, 1_000_000n));
      d.lp = next;
      return;
    }
    case 'position.received': {
      // Liquidity minted for the vault by someone else: what it cost joins the basket of the
      // position the pool keeps it in (the vault's holdings at this block name it by its range).
      const p = r.payload;
      const pool = r.context.pools.find((x) => x.address === p.pool);
      const flowsIn = pool
        ? add(add(lp.flowsIn, pool.token0, BigInt(p.amount0)), pool.token1, BigInt(p.amount1))
        : lp.flowsIn;
      let id: string | undefined;
      for (const x of positionList(d.positions))
        if (x.pool === p.pool && x.tickLower === p.tickLower && x.tickUpper === p.tickUpper) id = x.id;
      if (id === undefined) {
        const next = copyLp(lp);
        next.flowsIn = flowsIn;
        d.lp = next;
        return;
      }
      const b = entryOf(lp.baskets, id);
      const next = copyLp(lp);
      next.flowsIn = flowsIn;
      next.baskets = withEntry(lp.baskets, {
        id,
        amount0: (b?.amount0 ?? 0n) + BigInt(p.amount0) * ONE,
        amount1: (b?.amount1 ?? 0n) + BigInt(p.amount1) * ONE,
        liquidity: (b?.liquidity ?? 0n) + BigInt(p.liquidity),
      });
      d.lp = next;
      return;
    }
    default:
      return;
  }
}

/**
 * A token's new amount since `valued` (raw per token), valued at the draft's prices, into `acc`.
 * A token that never had a valid price is left out (its amount is valued at its first valid
 * price, never at 0). `acc.valued` is copied once, at the first token that moved.
 */
interface Valuing {
  usd: Fixed;
  valued: TokenMap<bigint>;
  copied: Record<Address, bigint> | null;
}
function valueToken(d: Pick<VaultState, 'tokens'>, acc: Valuing, token: Address, cur: bigint): void {
  const was = (acc.copied ?? acc.valued)[token] ?? 0n;
  if (cur === was) return;
  const t = d.tokens[token];
  if (!t || t.price === 0n) return;
  acc.usd += tokenValue(cur - was, t.decimals, t.price);
  acc.copied ??= { ...acc.valued };
  if (cur === 0n) delete acc.copied[token];
  else acc.copied[token] = cur;
}

/** Fees earned of `token` now: collected + what the pools owe every live position. */
function feesOf(s: Pick<VaultState, 'positions'>, lp: LpState, token: Address): bigint {
  let x = lp.collected[token] ?? 0n;
  for (const p of positionList(s.positions)) {
    if (p.token0 === token) x += p.owed0;
    if (p.token1 === token) x += p.owed1;
  }
  return x;
}

/** Rewards earned of `token` now: claimed + pending. */
function rewardsOf(s: Pick<VaultState, 'pendingRewards'>, lp: LpState, token: Address): bigint {
  return (lp.claimed[token] ?? 0n) + (s.pendingRewards[token] ?? 0n);
}

/** Whether every key of `map` is `a` or `b`. */
function onlyPair(map: TokenMap<bigint>, a: Address, b: Address): boolean {
  for (const k in map) if (k !== a && k !== b) return false;
  return true;
}

/** One accumulator per kind, reused: the fold is synchronous. */
const FEES: Valuing = { usd: 0n, valued: {}, copied: null };
const REWARDS: Valuing = { usd: 0n, valued: {}, copied: null };
const CLAIMS: Valuing = { usd: 0n, valued: {}, copied: null };
function begin(acc: Valuing, valued: TokenMap<bigint>): Valuing {
  acc.usd = 0n;
  acc.valued = valued;
  acc.copied = null;
  return acc;
}

/**
 * What was earned since the last block end, valued at the draft's prices: fees (collected + owed),
 * rewards (claimed + pending) and claims, each against what is valued already. No map is built
 * unless something moved (the usual block end: nothing). Fees of a vault whose positions are all
 * of its own pair (the usual vault) are summed in one pass over its positions.
 */
function valueEarned(d: Draft, lp: LpState, next: Mutable<LpState>): void {
  const fees = begin(FEES, lp.feesValued);
  const t0 = d.token0;
  const t1 = d.token1;
  let e0 = lp.collected[t0] ?? 0n;
  let e1 = lp.collected[t1] ?? 0n;
  let pair = onlyPair(lp.collected, t0, t1) && onlyPair(lp.feesValued, t0, t1);
  for (const p of positionList(d.positions)) {
    if (!pair) break;
    if (p.token0 !== t0 || p.token1 !== t1) pair = false;
    if (p.owed0 !== 0n) e0 += p.owed0;
    if (p.owed1 !== 0n) e1 += p.owed1;
  }
  if (pair) {
    valueToken(d, fees, t0, e0);
    valueToken(d, fees, t1, e1);
  } else {
    for (const t in lp.collected) valueToken(d, fees, t as Address, feesOf(d, lp, t as Address));
    for (const p of positionList(d.positions)) {
      valueToken(d, fees, p.token0, feesOf(d, lp, p.token0));
      valueToken(d, fees, p.token1, feesOf(d, lp, p.token1));
    }
    for (const t in lp.feesValued) valueToken(d, fees, t as Address, feesOf(d, lp, t as Address));
  }
  if (fees.copied) {
    next.feesValued = fees.copied;
    next.feesUsd = lp.feesUsd + fees.usd;
  }
  const rewards = begin(REWARDS, lp.rewardsValued);
  for (const t in lp.claimed) valueToken(d, rewards, t as Address, rewardsOf(d, lp, t as Address));
  for (const t in d.pendingRewards) valueToken(d, rewards, t as Address, rewardsOf(d, lp, t as Address));
  for (const t in lp.rewardsValued) valueToken(d, rewards, t as Address, rewardsOf(d, lp, t as Address));
  if (rewards.copied) {
    next.rewardsValued = rewards.copied;
    next.rewardsUsd = lp.rewardsUsd + rewards.usd;
  }
  const claimed = begin(CLAIMS, lp.claimedValued);
  for (const t in lp.claimed) valueToken(d, claimed, t as Address, lp.claimed[t as Address]!);
  for (const t in lp.claimedValued) valueToken(d, claimed, t as Address, lp.claimed[t as Address] ?? 0n);
  if (claimed.copied) {
    next.claimedValued = claimed.copied;
    next.claimedUsd = lp.claimedUsd + claimed.usd;
  }
  // Nothing of a block end is held by the shared accumulators.
  FEES.valued = REWARDS.valued = CLAIMS.valued = EMPTY;
  FEES.copied = REWARDS.copied = CLAIMS.copied = null;
}
const EMPTY: TokenMap<bigint> = {};

/** Fees earned so far in token terms: collected + what the pools owe every live position. */
export function feesEarnedRaw(s: Pick<VaultState, 'positions'>, lp: LpState): TokenMap<bigint> {
  let out: Record<Address, bigint> | null = null;
  for (const p of positionList(s.positions)) {
    if (p.owed0 === 0n && p.owed1 === 0n) continue;
    out ??= { ...lp.collected };
    if (p.owed0 !== 0n) out[p.token0] = (out[p.token0] ?? 0n) + p.owed0;
    if (p.owed1 !== 0n) out[p.token1] = (out[p.token1] ?? 0n) + p.owed1;
  }
  return out ?? lp.collected;
}

/** Rewards earned so far in token terms: claimed + pending. */
export function rewardsEarnedRaw(s: Pick<VaultState, 'pendingRewards'>, lp: LpState): TokenMap<bigint> {
  let out: Record<Address, bigint> | null = null;
  for (const token in s.pendingRewards) {
    out ??= { ...lp.claimed };
    out[token as Address] = (out[token as Address] ?? 0n) + s.pendingRewards[token as Address]!;
  }
  return out ?? lp.claimed;
}

/**
 * The block part, at a vault's block end (after the book was reconciled and the return index
 * chained): unexplained inflows join the token flows; what was earned since the last block end
 * (fees, rewards, claims) is valued at this block's prices; the interval since the previous block
 * end (`start`; null for a vault created in this block) adds its capital-time (that end's value ×
 * the interval) and its time in range (that end's positions and pool ticks held over it: every
 * range flip is a record of its own, so nothing flips unseen between two block ends); the return
 * index's peak and maximum drawdown move.
 */
export function lpBlockEnd(d: Draft, start: VaultState | null): void {
  const lp = d.lp;
  if (!lp) return;
  const next = copyLp(lp);
  for (const r of d.reconciled) if (r.amount > 0n) next.flowsIn = add(next.flowsIn, r.token, r.amount);

  valueEarned(d, lp, next);

  const dt = start ? d.updatedAt - start.updatedAt : 0;
  if (start && dt > 0) {
    next.capitalMs = lp.capitalMs + start.valueUsd * BigInt(dt);
    if (start.valueUsd >= MIN_RETURN_BASE_USD) next.fundedMs = lp.fundedMs + dt;
    let open = false;
    let all = true;
    let ranges: (RangeTime & ById)[] | null = null;
    for (const p of positionList(start.positions)) {
      const id = p.id;
      if (p.liquidity === 0n) continue;
      open = true;
      const inRange = positionInRange(start, p);
      if (!inRange) all = false;
      if (!holdsPosition(d.positions, id)) continue;
      ranges ??= lp.ranges.slice();
      let i = 0;
      while (i < ranges.length && ranges[i]!.id !== id) i++;
      const was = ranges[i];
      const now: RangeTime & ById = {
        id,
        openMs: (was?.openMs ?? 0) + dt,
        inRangeMs: (was?.inRangeMs ?? 0) + (inRange ? dt : 0),
      };
      if (was) ranges[i] = now;
      else ranges = withEntry(ranges, now);
    }
    if (ranges) next.ranges = ranges;
    if (open) {
      next.openMs = lp.openMs + dt;
      if (all) next.inRangeMs = lp.inRangeMs + dt;
    }
  }
  // Times of positions no longer held are in the vault's figure; their own entries go.
  for (const x of next.ranges)
    if (!holdsPosition(d.positions, x.id)) {
      next.ranges = next.ranges.filter((e) => holdsPosition(d.positions, e.id));
      break;
    }
  // A basket whose position the chain no longer holds (no event closed it) is realised at nothing.
  for (const x of next.baskets)
    if (!holdsPosition(d.positions, x.id)) {
      let lost = 0n;
      for (const e of next.baskets) if (!holdsPosition(d.positions, e.id)) lost += basketUsd(d, e);
      next.baskets = next.baskets.filter((e) => holdsPosition(d.positions, e.id));
      next.divergenceUsd -= lost;
      break;
    }

  // A block end at or above the previous one's index (under the same peak) cannot draw down more.
  if (d.returnIndex > next.peakIndex) next.peakIndex = d.returnIndex;
  else if (next.peakIndex > 0n && !(start && d.returnIndex >= start.returnIndex)) {
    const dd = divRound((next.peakIndex - d.returnIndex) * ONE, next.peakIndex);
    if (dd > next.maxDrawdown) next.maxDrawdown = dd;
  }
  // What accrued over the interval counts for the strategy in force at its start.
  if (start && start.strategy !== d.strategy) creditEarlier(lp, next, start.strategy, d.strategy);
  d.lp = next;
}

/** The positions' divergence not yet realised: each basket's position now (no fees) − the basket held. */
export function unrealisedDivergenceUsd(s: VaultState): Fixed {
  const lp = s.lp;
  if (!lp) return 0n;
  let v = 0n;
  for (const b of lp.baskets) {
    const p = s.positions[b.id];
    if (!p) continue;
    const a = positionAmounts(s, p);
    v += usd(s, p.token0, a.amount0) + usd(s, p.token1, a.amount1) - basketUsd(s, b);
  }
  return v;
}

/** The return index's current drawdown from its peak (10^18 = 100 %). */
export function currentDrawdown(s: VaultState): Fixed {
  const lp = s.lp;
  if (!lp || lp.peakIndex <= 0n || s.returnIndex >= lp.peakIndex) return 0n;
  return divRound((lp.peakIndex - s.returnIndex) * ONE, lp.peakIndex);
}
