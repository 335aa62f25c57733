import { z } from 'zod';
import { parseFixed } from '../math/fixed.js';
import { getSqrtRatioAtTick } from '../math/tick-math.js';
import { DEFAULT_PERFORMANCE_FEE_BPS } from '../records/payloads.js';
import { address, decimalString, intString, tick, uintString } from '../records/primitives.js';
import { listToObject, objectToList, strategyFigures } from './lp.js';
import { type Address, copyLp, type LpState, type Position, type VaultState } from './state.js';

/**
 * JSON form of VaultState (the projector's jsonb column): bigints as decimal strings, derived
 * caches (position sqrt ratios, token prices as Fixed) dropped and rebuilt on the way in.
 * `v` versions the shape; bump it (and migrate) when VaultState changes. v2: holdings read from
 * the chain (owed tokens per position, the book, reconciliations); a v1 state is rebuilt by
 * re-folding the log (`vault-yield rebuild`).
 */
const addrMap = <T extends z.ZodType>(v: T) => z.record(address, v);

const stateFields = z.object({
  chainId: z.number().int().positive(),
  vault: address,
  owner: address,
  strategy: z.string(),
  pool: address,
  token0: address,
  token1: address,
  createdAt: z.number().int().nonnegative(),
  updatedAt: z.number().int().nonnegative(),
  blockNumber: z.number().int().nonnegative(),
  records: z.number().int().positive(),
  exitRequested: z.boolean(),
  /** Absent in states written before fold version 3: the reference schedule's rate. */
  performanceFeeBps: z.number().int().min(0).max(10_000).optional(),
  /** Absent in states written before fold version 3: false. */
  exited: z.boolean().optional(),
  suspension: z.object({ reason: z.string(), since: z.number().int().nonnegative() }).nullable(),
  tokens: addrMap(
    z.object({
      symbol: z.string(),
      decimals: z.number().int().min(0).max(36),
      priceUsd: decimalString,
      feed: address,
      priceUpdatedAt: z.number().int().nonnegative(),
      heartbeat: z.number().int().positive(),
      /** Present (true) only while the feed's latest answer was no price (TokenPrice.priceInvalid). */
      priceInvalid: z.literal(true).optional(),
    }),
  ),
  pools: addrMap(
    z.object({
      venue: z.string(),
      feeTier: z.number().int().nonnegative(),
      sqrtPriceX96: uintString,
      tick,
      token0: address,
      token1: address,
    }),
  ),
  idle: addrMap(uintString),
  pendingRewards: addrMap(uintString),
  positions: z.record(
    z.string(),
    z.object({
      id: uintString,
      pool: address,
      token0: address,
      token1: address,
      tickLower: tick,
      tickUpper: tick,
      liquidity: uintString,
      owed0: uintString,
      owed1: uintString,
    }),
  ),
  book: addrMap(intString),
  /** valueUsd null: the token had no valid price yet (fold version 4). */
  reconciled: z.array(z.object({ token: address, amount: intString, valueUsd: intString.nullable() })),
  benchmark: addrMap(uintString),
  /** Absent when empty, and in states written before fold version 4 (VaultState.unpriced). */
  unpriced: z
    .array(
      z.object({
        source: z.enum(['deposit', 'withdrawal', 'received', 'unexplainedIn', 'unexplainedOut', 'fee']),
        token: address,
        raw: uintString,
        rateBps: z.number().int().min(0).max(10_000).optional(),
        blockNumber: z.number().int().nonnegative(),
      }),
    )
    .optional(),
  capitalInUsd: intString,
  capitalOutUsd: intString,
  /**
   * The sums by source (fold version 4). Absent in older states: every capital in read as the
   * owner's deposits, nothing received, unexplained or lost (their figures until a rebuild).
   */
  depositedUsd: intString.optional(),
  receivedUsd: intString.optional(),
  unexplainedInUsd: intString.optional(),
  lostUsd: intString.optional(),
  /** Present only while the vault is flagged (VaultState.drain). */
  drain: z
    .object({
      since: z.number().int().nonnegative(),
      blockNumber: z.number().int().nonnegative(),
      lostUsd: intString,
    })
    .optional(),
  taxedUsd: intString,
  highWaterUsd: intString,
  marketDeltaUsd: intString,
  valueUsd: intString,
  returnIndex: intString,
  /** The LP figures (fold version 5); absent in older states: null until a rebuild. */
  lp: z
    .object({
      collected: addrMap(uintString),
      feesValued: addrMap(uintString),
      feesUsd: intString,
      claimed: addrMap(uintString),
      claimedValued: addrMap(uintString),
      claimedUsd: intString,
      rewardsValued: addrMap(uintString),
      rewardsUsd: intString,
      capitalMs: intString,
      fundedMs: z.number().int().nonnegative(),
      openMs: z.number().int().nonnegative(),
      inRangeMs: z.number().int().nonnegative(),
      ranges: z.record(
        z.string(),
        z.object({ openMs: z.number().int().nonnegative(), inRangeMs: z.number().int().nonnegative() }),
      ),
      baskets: z.record(
        z.string(),
        z.object({ amount0: intString, amount1: intString, liquidity: uintString }),
      ),
      divergenceUsd: intString,
      rebalances: z.number().int().nonnegative(),
      /** Absent in states written before swaps were recorded: none. */
      swaps: z.number().int().nonnegative().optional(),
      swapCostUsd: intString.optional(),
      swapFeesUsd: intString.optional(),
      peakIndex: intString,
      maxDrawdown: intString,
      flowsIn: addrMap(uintString),
      flowsOut: addrMap(uintString),
      byStrategy: z.record(
        z.string(),
        z.object({
          feesUsd: intString,
          rewardsUsd: intString,
          capitalMs: intString,
          fundedMs: z.number().int().nonnegative(),
          openMs: z.number().int().nonnegative(),
          inRangeMs: z.number().int().nonnegative(),
          rebalances: z.number().int().nonnegative(),
          divergenceUsd: intString,
        }),
      ),
    })
    .optional(),
});

const flowsField = z.array(
  z.object({
    kind: z.enum(['in', 'out', 'fee']),
    token: address,
    raw: uintString,
    rateBps: z.number().int().min(0).max(10_000).optional(),
  }),
);

/**
 * The open block as fold version 2 wrote it: the previous block end's figures only. Read back as
 * a previous block end that is the state itself with those figures (its holdings are the open
 * block's): exact for the fold; a snapshot served from it until the block ends shows those
 * figures beside the block's holdings. `vault-yield rebuild` replaces such states.
 */
const legacyBlockStart = z.object({
  valueUsd: intString,
  capitalInUsd: intString,
  capitalOutUsd: intString,
  strategy: z.string().nullable(),
  highWaterUsd: intString,
  benchmark: addrMap(uintString),
  flows: flowsField,
});

export const serializedState = stateFields.extend({
  v: z.literal(2),
  /** Only inside a block (VaultState.blockStart): absent from every block-end state. */
  blockStart: z
    .union([z.object({ end: stateFields.nullable(), flows: flowsField }), legacyBlockStart])
    .optional(),
});
export type SerializedState = z.output<typeof serializedState>;

const mapValues = <A, B>(m: Readonly<Record<string, A>>, f: (a: A) => B): Record<Address, B> => {
  const out: Record<string, B> = {};
  for (const k in m) out[k] = f(m[k] as A);
  return out as Record<Address, B>;
};

export function serializeState(s: VaultState): SerializedState {
  const open = s.blockStart;
  return {
    v: 2,
    ...fieldsOf(s),
    ...(open
      ? {
          blockStart: {
            end: open.end ? fieldsOf(open.end) : null,
            flows: open.flows.map((f) => ({
              kind: f.kind,
              token: f.token,
              raw: f.raw.toString(),
              ...(f.rateBps === undefined ? {} : { rateBps: f.rateBps }),
            })),
          },
        }
      : {}),
  };
}

/** A state's own fields (its open block apart). */
function fieldsOf(s: VaultState): z.output<typeof stateFields> {
  return {
    chainId: s.chainId,
    vault: s.vault,
    owner: s.owner,
    strategy: s.strategy,
    pool: s.pool,
    token0: s.token0,
    token1: s.token1,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    blockNumber: s.blockNumber,
    records: s.records,
    exitRequested: s.exitRequested,
    performanceFeeBps: s.performanceFeeBps,
    ...(s.exited ? { exited: true } : {}),
    suspension: s.suspension ? { reason: s.suspension.reason, since: s.suspension.since } : null,
    tokens: mapValues(s.tokens, (t) => ({
      symbol: t.symbol,
      decimals: t.decimals,
      priceUsd: t.priceUsd,
      feed: t.feed,
      priceUpdatedAt: t.priceUpdatedAt,
      heartbeat: t.heartbeat,
      ...(t.priceInvalid ? { priceInvalid: true as const } : {}),
    })),
    pools: mapValues(s.pools, (p) => ({ ...p, sqrtPriceX96: p.sqrtPriceX96.toString() })),
    idle: mapValues(s.idle, String),
    pendingRewards: mapValues(s.pendingRewards, String),
    positions: mapValues(s.positions, (p) => ({
      id: p.id,
      pool: p.pool,
      token0: p.token0,
      token1: p.token1,
      tickLower: p.tickLower,
      tickUpper: p.tickUpper,
      liquidity: p.liquidity.toString(),
      owed0: p.owed0.toString(),
      owed1: p.owed1.toString(),
    })),
    book: mapValues(s.book, String),
    reconciled: s.reconciled.map((r) => ({
      token: r.token,
      amount: r.amount.toString(),
      valueUsd: r.valueUsd === null ? null : r.valueUsd.toString(),
    })),
    benchmark: mapValues(s.benchmark, String),
    ...(s.unpriced.length > 0
      ? {
          unpriced: s.unpriced.map((f) => ({
            source: f.source,
            token: f.token,
            raw: f.raw.toString(),
            ...(f.rateBps === undefined ? {} : { rateBps: f.rateBps }),
            blockNumber: f.blockNumber,
          })),
        }
      : {}),
    capitalInUsd: s.capitalInUsd.toString(),
    capitalOutUsd: s.capitalOutUsd.toString(),
    depositedUsd: s.depositedUsd.toString(),
    receivedUsd: s.receivedUsd.toString(),
    unexplainedInUsd: s.unexplainedInUsd.toString(),
    lostUsd: s.lostUsd.toString(),
    ...(s.drain
      ? {
          drain: {
            since: s.drain.since,
            blockNumber: s.drain.blockNumber,
            lostUsd: s.drain.lostUsd.toString(),
          },
        }
      : {}),
    taxedUsd: s.taxedUsd.toString(),
    highWaterUsd: s.highWaterUsd.toString(),
    marketDeltaUsd: s.marketDeltaUsd.toString(),
    valueUsd: s.valueUsd.toString(),
    returnIndex: s.returnIndex.toString(),
    ...(s.lp ? { lp: lpFields(s.lp, s.strategy) } : {}),
  };
}

function lpFields(lp: LpState, strategy: string): NonNullable<z.output<typeof stateFields>['lp']> {
  return {
    collected: mapValues(lp.collected, String),
    feesValued: mapValues(lp.feesValued, String),
    feesUsd: lp.feesUsd.toString(),
    claimed: mapValues(lp.claimed, String),
    claimedValued: mapValues(lp.claimedValued, String),
    claimedUsd: lp.claimedUsd.toString(),
    rewardsValued: mapValues(lp.rewardsValued, String),
    rewardsUsd: lp.rewardsUsd.toString(),
    capitalMs: lp.capitalMs.toString(),
    fundedMs: lp.fundedMs,
    openMs: lp.openMs,
    inRangeMs: lp.inRangeMs,
    ranges: listToObject(lp.ranges, (r) => ({ openMs: r.openMs, inRangeMs: r.inRangeMs })),
    baskets: listToObject(lp.baskets, (b) => ({
      amount0: b.amount0.toString(),
      amount1: b.amount1.toString(),
      liquidity: b.liquidity.toString(),
    })),
    divergenceUsd: lp.divergenceUsd.toString(),
    rebalances: lp.rebalances,
    swaps: lp.swaps,
    swapCostUsd: lp.swapCostUsd.toString(),
    swapFeesUsd: lp.swapFeesUsd.toString(),
    peakIndex: lp.peakIndex.toString(),
    maxDrawdown: lp.maxDrawdown.toString(),
    flowsIn: mapValues(lp.flowsIn, String),
    flowsOut: mapValues(lp.flowsOut, String),
    // Stored as each strategy's own figures (the fold keeps the running one against the totals).
    byStrategy: mapValues(strategyFigures(lp.byStrategy, lp, strategy), (b) => ({
      feesUsd: b.feesUsd.toString(),
      rewardsUsd: b.rewardsUsd.toString(),
      capitalMs: b.capitalMs.toString(),
      fundedMs: b.fundedMs,
      openMs: b.openMs,
      inRangeMs: b.inRangeMs,
      rebalances: b.rebalances,
      divergenceUsd: b.divergenceUsd.toString(),
    })),
  };
}

function lpOf(j: NonNullable<z.output<typeof stateFields>['lp']>, strategy: string): LpState {
  const lp: LpState = {
    collected: mapValues(j.collected, BigInt),
    feesValued: mapValues(j.feesValued, BigInt),
    feesUsd: BigInt(j.feesUsd),
    claimed: mapValues(j.claimed, BigInt),
    claimedValued: mapValues(j.claimedValued, BigInt),
    claimedUsd: BigInt(j.claimedUsd),
    rewardsValued: mapValues(j.rewardsValued, BigInt),
    rewardsUsd: BigInt(j.rewardsUsd),
    capitalMs: BigInt(j.capitalMs),
    fundedMs: j.fundedMs,
    openMs: j.openMs,
    inRangeMs: j.inRangeMs,
    ranges: objectToList(j.ranges, (id, r) => ({ id, openMs: r.openMs, inRangeMs: r.inRangeMs })),
    baskets: objectToList(j.baskets, (id, b) => ({
      id,
      amount0: BigInt(b.amount0),
      amount1: BigInt(b.amount1),
      liquidity: BigInt(b.liquidity),
    })),
    divergenceUsd: BigInt(j.divergenceUsd),
    rebalances: j.rebalances,
    swaps: j.swaps ?? 0,
    swapCostUsd: BigInt(j.swapCostUsd ?? '0'),
    swapFeesUsd: BigInt(j.swapFeesUsd ?? '0'),
    peakIndex: BigInt(j.peakIndex),
    maxDrawdown: BigInt(j.maxDrawdown),
    flowsIn: mapValues(j.flowsIn, BigInt),
    flowsOut: mapValues(j.flowsOut, BigInt),
    byStrategy: {},
  };
  const stored = mapValues(j.byStrategy, (b) => ({
    feesUsd: BigInt(b.feesUsd),
    rewardsUsd: BigInt(b.rewardsUsd),
    capitalMs: BigInt(b.capitalMs),
    fundedMs: b.fundedMs,
    openMs: b.openMs,
    inRangeMs: b.inRangeMs,
    rebalances: b.rebalances,
    divergenceUsd: BigInt(b.divergenceUsd),
  }));
  const out = copyLp(lp);
  out.byStrategy = strategyFigures(stored, lp, strategy, -1);
  return out;
}

/** Validates with zod and rebuilds a VaultState; throws a ZodError on a malformed document. */
export function deserializeState(json: unknown): VaultState {
  const { v: _version, blockStart, ...j } = serializedState.parse(json);
  const s = stateOf(j);
  if (!blockStart) return s;
  const flows = blockStart.flows.map((f) => ({
    kind: f.kind,
    token: f.token,
    raw: BigInt(f.raw),
    ...(f.rateBps === undefined ? {} : { rateBps: f.rateBps }),
  }));
  if ('end' in blockStart)
    return { ...s, blockStart: { end: blockStart.end ? stateOf(blockStart.end) : null, flows } };
  const b = blockStart;
  const end: VaultState | null =
    b.strategy === null
      ? null
      : {
          ...s,
          valueUsd: BigInt(b.valueUsd),
          capitalInUsd: BigInt(b.capitalInUsd),
          capitalOutUsd: BigInt(b.capitalOutUsd),
          strategy: b.strategy,
          highWaterUsd: BigInt(b.highWaterUsd),
          benchmark: mapValues(b.benchmark, BigInt),
        };
  return { ...s, blockStart: { end, flows } };
}

function stateOf(j: z.output<typeof stateFields>): VaultState {
  return {
    ...j,
    exited: j.exited ?? false,
    performanceFeeBps: j.performanceFeeBps ?? DEFAULT_PERFORMANCE_FEE_BPS,
    tokens: mapValues(j.tokens, (t) => ({
      ...t,
      price: parseFixed(t.priceUsd),
      priceInvalid: t.priceInvalid ?? false,
    })),
    pools: mapValues(j.pools, (p) => ({ ...p, sqrtPriceX96: BigInt(p.sqrtPriceX96) })),
    idle: mapValues(j.idle, BigInt),
    pendingRewards: mapValues(j.pendingRewards, BigInt),
    positions: mapValues(
      j.positions,
      (p): Position => ({
        ...p,
        sqrtLower: getSqrtRatioAtTick(p.tickLower),
        sqrtUpper: getSqrtRatioAtTick(p.tickUpper),
        liquidity: BigInt(p.liquidity),
        owed0: BigInt(p.owed0),
        owed1: BigInt(p.owed1),
      }),
    ),
    book: mapValues(j.book, BigInt),
    reconciled: j.reconciled.map((r) => ({
      token: r.token,
      amount: BigInt(r.amount),
      valueUsd: r.valueUsd === null ? null : BigInt(r.valueUsd),
    })),
    benchmark: mapValues(j.benchmark, BigInt),
    unpriced: (j.unpriced ?? []).map(({ rateBps, ...f }) => ({
      ...f,
      raw: BigInt(f.raw),
      ...(rateBps === undefined ? {} : { rateBps }),
    })),
    capitalInUsd: BigInt(j.capitalInUsd),
    capitalOutUsd: BigInt(j.capitalOutUsd),
    depositedUsd: BigInt(j.depositedUsd ?? j.capitalInUsd),
    receivedUsd: BigInt(j.receivedUsd ?? '0'),
    unexplainedInUsd: BigInt(j.unexplainedInUsd ?? '0'),
    lostUsd: BigInt(j.lostUsd ?? '0'),
    drain: j.drain ? { ...j.drain, lostUsd: BigInt(j.drain.lostUsd) } : null,
    taxedUsd: BigInt(j.taxedUsd),
    highWaterUsd: BigInt(j.highWaterUsd),
    marketDeltaUsd: BigInt(j.marketDeltaUsd),
    valueUsd: BigInt(j.valueUsd),
    returnIndex: BigInt(j.returnIndex),
    lp: j.lp ? lpOf(j.lp, j.strategy) : null,
  };
}
