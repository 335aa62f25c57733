import type { Fixed } from '../math/fixed.js';

export type Address = `0x${string}`;

/** Last known valuation of a token (from the latest record context that listed it). */
export interface TokenPrice {
  readonly symbol: string;
  readonly decimals: number;
  /** The context's decimal string, kept to skip re-parsing an unchanged price. */
  readonly priceUsd: string;
  /** USD per whole token, 10^18 fixed point. */
  readonly price: Fixed;
  /** The feed the price was read from, its `updatedAt` (Unix seconds) and heartbeat (seconds). */
  readonly feed: Address;
  readonly priceUpdatedAt: number;
  readonly heartbeat: number;
  /**
   * The feed's latest answer at the vault's last block was no price (zero or negative: the record
   * carries "0"). `price`, `priceUsd` and `priceUpdatedAt` are then the last valid answer's, so
   * nothing is ever valued at 0 while a valid price was ever read (a vault whose very first read
   * of a token is invalid has no other price: 0, flagged). Served in `stalePrices` as `invalid`.
   */
  readonly priceInvalid: boolean;
}

/** Last known slot0 of a pool. */
export interface PoolPrice {
  readonly venue: string;
  readonly feeTier: number;
  readonly sqrtPriceX96: bigint;
  readonly tick: number;
  readonly token0: Address;
  readonly token1: Address;
}

export interface Position {
  /** The onchain uint256 as a decimal string. */
  readonly id: string;
  readonly pool: Address;
  readonly token0: Address;
  readonly token1: Address;
  readonly tickLower: number;
  readonly tickUpper: number;
  /** Derived from the ticks (cached, not serialised). */
  readonly sqrtLower: bigint;
  readonly sqrtUpper: bigint;
  readonly liquidity: bigint;
  /** Owed by the pool beyond the liquidity (tokensOwed + uncollected fees), raw units, as read. */
  readonly owed0: bigint;
  readonly owed1: bigint;
}

/** What a record booked that its events did not explain (see `reconcile` in evolve.ts). */
export interface Reconciliation {
  readonly token: Address;
  /** Raw units: positive = more than the events explain (an inflow), negative = less. */
  readonly amount: bigint;
  /**
   * |amount| valued at the record's price; null when the token never had a valid price yet (the
   * difference waits in `unpriced` and is valued at the token's first valid price).
   */
  readonly valueUsd: Fixed | null;
}

/**
 * Where a capital flow or a fee came from: the owner's `deposit` / `withdrawal`, tokens or
 * liquidity `received` from someone else (`transfer.received`, `position.received`), a balance
 * the events do not explain (`unexplainedIn` / `unexplainedOut`, booked at a block end), or a
 * performance `fee` charged.
 */
export type FlowSource = 'deposit' | 'withdrawal' | 'received' | 'unexplainedIn' | 'unexplainedOut' | 'fee';

/**
 * A flow of a token that never had a valid price (its feed answered no price at every block the
 * vault read it so far): it cannot be valued yet, and valuing it at 0 would book the principal as a
 * gain once the price comes. It waits, raw, in `VaultState.unpriced` and is booked at the token's
 * first valid price, at that block (evolve.ts `bookUnpriced`), as if it were made there.
 */
export interface UnpricedFlow {
  readonly source: FlowSource;
  readonly token: Address;
  /** Raw token units (> 0). */
  readonly raw: bigint;
  /** A fee's: the vault's rate when it was charged. */
  readonly rateBps?: number;
  /** The block of the record that made the flow. */
  readonly blockNumber: number;
}

/**
 * An outflow no vault event explains (a drain): the vault's tokens left without a withdrawal, a
 * fee charge or a position event. Booked as a loss (`lostUsd`), and flagged until the owner acts
 * again (a deposit, a withdrawal or an exit request): the vault reads `attention` meanwhile.
 */
export interface Drain {
  /** Unix ms of the block where the first unexplained outflow since the owner last acted was found. */
  readonly since: number;
  readonly blockNumber: number;
  /** The value lost since then (USD, at each outflow's block prices; 0 for a token without a price yet). */
  readonly lostUsd: Fixed;
}

export interface Suspension {
  readonly reason: string;
  /** Unix ms of the block of the `suspended` record. */
  readonly since: number;
}

export type TokenMap<T> = Readonly<Record<Address, T>>;

/** A position's time open (liquidity > 0) and in range, block time, ms (fold/lp.ts). */
export interface RangeTime {
  readonly openMs: number;
  readonly inRangeMs: number;
}

/**
 * An entry of a per-position list of the LP state (`ranges`, `baskets`): kept as a list in the
 * order a JSON object of these ids enumerates (integer ids ascending, then the others as added),
 * never as an object keyed by id — position ids are integers, and V8 keeps integer keys as an
 * object's elements (sparse ones in a dictionary), slow to copy and to walk at every block end.
 */
export interface ById {
  readonly id: string;
}

/**
 * What the vault put into a position, in token units of its pool · 10^18 (fractional after a
 * partial decrease), and the liquidity it bought: the "held instead" side of divergence loss.
 */
export interface PositionBasket {
  readonly amount0: bigint;
  readonly amount1: bigint;
  readonly liquidity: bigint;
}

/**
 * A vault's LP figures earned while it ran one strategy (LpState.byStrategy): each interval
 * between two block ends counts for the strategy in force at the earlier one, each event for the
 * strategy in force when it happened. Summed over a strategy's vaults by the catalogue.
 */
export interface StrategyLp {
  readonly feesUsd: Fixed;
  readonly rewardsUsd: Fixed;
  readonly capitalMs: bigint;
  readonly fundedMs: number;
  readonly openMs: number;
  readonly inRangeMs: number;
  readonly rebalances: number;
  readonly divergenceUsd: Fixed;
}

/**
 * The LP figures (issue #46; fold/lp.ts, fold version 5). Exact: raw token units, USD `Fixed`,
 * block time in ms. Event parts move with records; block parts only at block ends.
 */
export interface LpState {
  /** Trading fees collected (fees.collected), raw per token. */
  readonly collected: TokenMap<bigint>;
  /** Fees earned (collected + owed) already valued into feesUsd, raw per token. */
  readonly feesValued: TokenMap<bigint>;
  /** Σ fees earned, each part valued at the block end where it was first seen (USD). */
  readonly feesUsd: Fixed;
  /** Rewards claimed (rewards.claimed), raw per token. */
  readonly claimed: TokenMap<bigint>;
  /** Claims already valued into claimedUsd, raw per token. */
  readonly claimedValued: TokenMap<bigint>;
  /** Σ rewards claimed, each valued at its block's prices. */
  readonly claimedUsd: Fixed;
  /** Rewards earned (claimed + pending) already valued into rewardsUsd, raw per token. */
  readonly rewardsValued: TokenMap<bigint>;
  /** Σ rewards earned, each part valued at the block end where it was first seen. */
  readonly rewardsUsd: Fixed;
  /** ∫ valueUsd dt over block time (USD · 10^18 · ms): the time-weighted capital of the APRs. */
  readonly capitalMs: bigint;
  /** Block time the vault was worth at least MIN_RETURN_BASE_USD (1 USD): the APRs' history. */
  readonly fundedMs: number;
  /** Block time with at least one open position, and of it with every open position in range. */
  readonly openMs: number;
  readonly inRangeMs: number;
  /** Per live position id. */
  readonly ranges: readonly (RangeTime & ById)[];
  /** Per live position id (see PositionBasket). */
  readonly baskets: readonly (PositionBasket & ById)[];
  /** Divergence realised by decreases, rebalances and closes (USD; negative = a loss). */
  readonly divergenceUsd: Fixed;
  /** position.rebalanced records. */
  readonly rebalances: number;
  /** The vault's own swaps (`swap` records), and what they cost at the feeds' prices of their blocks. */
  readonly swaps: number;
  /** Σ (value paid − value received), each at its block's prices: the pool's fee and the price impact. */
  readonly swapCostUsd: Fixed;
  /** Σ the pool's fee on each swap: amountIn · feeTier / 10^6, at its block's price of the token paid. */
  readonly swapFeesUsd: Fixed;
  /** The return index's highest block-end value, and its largest fall from a peak (10^18 = 100 %). */
  readonly peakIndex: Fixed;
  readonly maxDrawdown: Fixed;
  /** Tokens put in (deposits, received, unexplained inflows) and taken out (withdrawals), raw. */
  readonly flowsIn: TokenMap<bigint>;
  readonly flowsOut: TokenMap<bigint>;
  /**
   * The figures above that accrue over time or events, by the strategy in force (StrategyLp). In
   * the fold the strategy in force holds its figures less the totals, so a block moves no entry;
   * stored (and served) as each strategy's own: `figuresByStrategy` (lp.ts).
   */
  readonly byStrategy: Readonly<Record<string, StrategyLp>>;
}

/** The LP figures of a vault before anything reached it (shared, never written to). */
export const EMPTY_LP: LpState = {
  collected: {},
  feesValued: {},
  feesUsd: 0n,
  claimed: {},
  claimedValued: {},
  claimedUsd: 0n,
  rewardsValued: {},
  rewardsUsd: 0n,
  capitalMs: 0n,
  fundedMs: 0,
  openMs: 0,
  inRangeMs: 0,
  ranges: [],
  baskets: [],
  divergenceUsd: 0n,
  rebalances: 0,
  swaps: 0,
  swapCostUsd: 0n,
  swapFeesUsd: 0n,
  peakIndex: 10n ** 18n,
  maxDrawdown: 0n,
  flowsIn: {},
  flowsOut: {},
  byStrategy: {},
};

/**
 * One vault's folded state. Immutable: `evolve` returns a new object that shares every map it did
 * not change (copy-on-write per map, maps hold a handful of entries), so a fold step costs a
 * shallow copy plus the valuation, never a deep clone.
 *
 * Money is exact: token amounts are raw bigint units; USD amounts are `Fixed` (10^18).
 */
export interface VaultState {
  readonly chainId: number;
  readonly vault: Address;
  readonly owner: Address;
  readonly strategy: string;
  /** The pool and tokens named at creation. */
  readonly pool: Address;
  readonly token0: Address;
  readonly token1: Address;
  readonly createdAt: number;
  /** Block timestamp of the last folded record, Unix ms. */
  readonly updatedAt: number;
  readonly blockNumber: number;
  /** Number of records folded, vault.created included. */
  readonly records: number;

  readonly exitRequested: boolean;
  /**
   * The vault's performance-fee rate (basis points), as the chain says: set at creation
   * (`vault.created`), changed by `fee.rate.set`. Charges settle the high water at it.
   */
  readonly performanceFeeBps: number;
  /**
   * An exit completed (`exit.completed`) and the vault was not put back to work since (a deposit
   * or a new position clears it): it reads `exiting` while anything of value is left to hand back,
   * `idle` once nothing is — never `aiming` (status.ts).
   */
  readonly exited: boolean;
  readonly suspension: Suspension | null;

  readonly tokens: TokenMap<TokenPrice>;
  readonly pools: TokenMap<PoolPrice>;
  /** Token balances of the vault (not in a position), raw, as read at the block (zero entries removed). */
  readonly idle: TokenMap<bigint>;
  /** Rewards earned, not yet claimed, raw units per reward token, as read (zero entries removed). */
  readonly pendingRewards: TokenMap<bigint>;
  /** Live positions by id, as read: open (liquidity > 0) or closed with tokens still owed. */
  readonly positions: Readonly<Record<string, Position>>;
  /**
   * The balances the events explain: the holdings at the vault's last block end, moved by each
   * event's token amounts since. Equal to `idle` after every `lastInBlock` record (reconciled).
   */
  readonly book: TokenMap<bigint>;
  /** What the last folded record booked to reconcile book and holdings (empty when nothing). */
  readonly reconciled: readonly Reconciliation[];

  /** Benchmark basket H: raw token quantities · 10^18 (fractional after pro-rata withdrawals). */
  readonly benchmark: TokenMap<bigint>;
  /**
   * Flows of tokens that never had a valid price yet, in log order (see UnpricedFlow): in none of
   * the USD figures below until their token's first valid price books them. Served as the
   * snapshot's `unpricedFlows`.
   */
  readonly unpriced: readonly UnpricedFlow[];

  /**
   * Σ capital in, each flow valued at its block's prices: the owner's deposits (`depositedUsd`),
   * tokens and liquidity received from others (`receivedUsd`) and balance increases no event
   * explains (`unexplainedInUsd`) — exactly their sum.
   */
  readonly capitalInUsd: Fixed;
  /**
   * Σ the owner's withdrawals, each valued at its block's prices (`fees.withdrawnUsd`). An outflow
   * no event explains is no capital out: it is a loss (`lostUsd`), so netUsd drops by it.
   */
  readonly capitalOutUsd: Fixed;
  /** Σ the owner's deposits (`deposit` records) at their blocks' prices (`fees.contributedUsd`). */
  readonly depositedUsd: Fixed;
  /** Σ tokens and liquidity received from others (`transfer.received`, `position.received`). */
  readonly receivedUsd: Fixed;
  /** Σ balance increases no event explains (`balance.reconciled`, bookedAs capitalIn). */
  readonly unexplainedInUsd: Fixed;
  /**
   * Σ balance decreases no event explains (`balance.reconciled`, bookedAs loss): value that left
   * the vault without a withdrawal. In netUsd (value fell, no capital out), not in capitalOutUsd.
   */
  readonly lostUsd: Fixed;
  /** The drain flag (see Drain); null when no unexplained outflow happened since the owner last acted. */
  readonly drain: Drain | null;
  /** Σ performance fees charged, valued at charge time. */
  readonly taxedUsd: Fixed;
  /** High-water mark; see fees.ts. */
  readonly highWaterUsd: Fixed;
  /** Σ over price changes of Σ_t H_t · ΔP_t. */
  readonly marketDeltaUsd: Fixed;
  /** Value after the last record: idle + positions + pending rewards, at the last context. */
  readonly valueUsd: Fixed;
  /**
   * Time-weighted return index (10^18 = 1 at creation), net of the performance fee as it is
   * earned, chained exactly on every block the vault has records in (return-index.ts
   * `blockReturnIndex`) over N = V − rate · max(0, V − HW): the value net of the fee accrued and
   * not yet charged, at the vault's rate then (`performanceFeeBps`). × N_0 / N_start, N_0 just
   * before the block's first flow (the block's end value less its flows, reconciliations
   * included), N_start at the vault's previous block end; then across each fee charge C_k × the
   * net value after it / before it — a charge moves the index only by what it differs from the
   * fee accrued, so a gain's fee is a return of the days (and the strategy) that earned the gain,
   * not of the day it is charged. Capital in and out are no return. A block, not a record, is the
   * step: holdings are read at the block's end, so a record that is not the last of its block has
   * no value of its own. A sub-period starting under MIN_RETURN_BASE_USD is × 1: a return on dust
   * is noise.
   */
  readonly returnIndex: Fixed;
  /**
   * The LP figures (LpState); null in a state folded before fold version 5 (they cannot be known
   * from the middle of a vault's history: `vault-yield rebuild` re-folds it).
   */
  readonly lp: LpState | null;
  /**
   * Present only inside a block (the vault's last record of the block not yet folded): the
   * figures at the previous block end, from which the block's return is chained and against
   * which its equity point is compared. Absent at every block end.
   */
  readonly blockStart?: BlockStart;
}

/** The vault at its previous block end, and the open block's capital flows (see VaultState.blockStart). */
export interface BlockStart {
  /**
   * The vault's state at its previous block end: the base of the block's return, the figures its
   * equity point is compared with, and what a snapshot serves while the block is open (a state
   * inside a block pairs the block-end holdings with only part of the block's flows). null: the
   * vault was created in this block (nothing to serve before its end).
   */
  readonly end: VaultState | null;
  /**
   * The block's capital flows so far, in order. A flow's "value just before" (which scales the
   * high water and the basket on a withdrawal, settles a fee charge and bounds the fee's
   * sub-period of the return) is only known at the block's end, from the flows after it: the
   * block is settled again from `end` then (evolve.ts `endBlock`).
   */
  readonly flows: readonly BlockFlow[];
}

/** A capital flow of an open block: capital in, capital out, or a performance fee charged. */
export interface BlockFlow {
  readonly kind: 'in' | 'out' | 'fee';
  readonly token: Address;
  /** Raw token units (> 0). */
  readonly raw: bigint;
  /**
   * The vault's rate when the flow was made (a rate may change inside the block): a fee's is the
   * rate it was charged at; every flow's prices the fee accrued at its place in the block (the
   * return index is net of it). Absent in a state written before flows carried it: the vault's rate.
   */
  readonly rateBps?: number;
}

/**
 * A vault's holdings and figures before anything reached it: what it starts from at creation, and
 * what a snapshot shows of a vault created in a block the fold has not finished. Shared, never
 * written to (the fold replaces maps, it does not mutate them).
 */
export const NOTHING_HELD: Pick<
  VaultState,
  | 'idle'
  | 'pendingRewards'
  | 'positions'
  | 'book'
  | 'reconciled'
  | 'benchmark'
  | 'unpriced'
  | 'capitalInUsd'
  | 'capitalOutUsd'
  | 'depositedUsd'
  | 'receivedUsd'
  | 'unexplainedInUsd'
  | 'lostUsd'
  | 'drain'
  | 'taxedUsd'
  | 'highWaterUsd'
  | 'marketDeltaUsd'
  | 'valueUsd'
  | 'lp'
> = {
  idle: {},
  pendingRewards: {},
  positions: {},
  book: {},
  reconciled: [],
  benchmark: {},
  unpriced: [],
  capitalInUsd: 0n,
  capitalOutUsd: 0n,
  depositedUsd: 0n,
  receivedUsd: 0n,
  unexplainedInUsd: 0n,
  lostUsd: 0n,
  drain: null,
  taxedUsd: 0n,
  highWaterUsd: 0n,
  marketDeltaUsd: 0n,
  valueUsd: 0n,
  lp: EMPTY_LP,
};

/**
 * A shallow copy of a state, every field named: one object of one shape (all fields in-object,
 * no property backing store), where a spread of a state copies whatever shape the state had —
 * the fold makes one a record.
 */
export function copyState(s: VaultState): { -readonly [K in keyof VaultState]: VaultState[K] } {
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
    exited: s.exited,
    suspension: s.suspension,
    tokens: s.tokens,
    pools: s.pools,
    idle: s.idle,
    pendingRewards: s.pendingRewards,
    positions: s.positions,
    book: s.book,
    reconciled: s.reconciled,
    benchmark: s.benchmark,
    unpriced: s.unpriced,
    capitalInUsd: s.capitalInUsd,
    capitalOutUsd: s.capitalOutUsd,
    depositedUsd: s.depositedUsd,
    receivedUsd: s.receivedUsd,
    unexplainedInUsd: s.unexplainedInUsd,
    lostUsd: s.lostUsd,
    drain: s.drain,
    taxedUsd: s.taxedUsd,
    highWaterUsd: s.highWaterUsd,
    marketDeltaUsd: s.marketDeltaUsd,
    valueUsd: s.valueUsd,
    returnIndex: s.returnIndex,
    lp: s.lp,
    blockStart: s.blockStart,
  };
}

/**
 * A copy of `lp` to write into, every field named: one shape for every LP state the fold makes,
 * so its copies stay monomorphic (a spread of states of several shapes is V8's slow path).
 */
export function copyLp(lp: LpState): { -readonly [K in keyof LpState]: LpState[K] } {
  return {
    collected: lp.collected,
    feesValued: lp.feesValued,
    feesUsd: lp.feesUsd,
    claimed: lp.claimed,
    claimedValued: lp.claimedValued,
    claimedUsd: lp.claimedUsd,
    rewardsValued: lp.rewardsValued,
    rewardsUsd: lp.rewardsUsd,
    capitalMs: lp.capitalMs,
    fundedMs: lp.fundedMs,
    openMs: lp.openMs,
    inRangeMs: lp.inRangeMs,
    ranges: lp.ranges,
    baskets: lp.baskets,
    divergenceUsd: lp.divergenceUsd,
    rebalances: lp.rebalances,
    swaps: lp.swaps,
    swapCostUsd: lp.swapCostUsd,
    swapFeesUsd: lp.swapFeesUsd,
    peakIndex: lp.peakIndex,
    maxDrawdown: lp.maxDrawdown,
    flowsIn: lp.flowsIn,
    flowsOut: lp.flowsOut,
    byStrategy: lp.byStrategy,
  };
}

const POSITION_LISTS = new WeakMap<object, readonly Position[]>();

/**
 * A positions map's entries as a list, in the map's own order (for-in's), made once per map (maps
 * are never written once a state holds them). Position ids are integers, which V8 keeps as an
 * object's elements (a dictionary once sparse): walking or copying such a map costs 10–40 × a
 * list's walk, and the fold walks a vault's positions several times a record.
 */
export function positionList(map: Readonly<Record<string, Position>>): readonly Position[] {
  let list = POSITION_LISTS.get(map);
  if (!list) {
    const made: Position[] = [];
    for (const id in map) made.push(map[id]!);
    POSITION_LISTS.set(map, made);
    list = made;
  }
  return list;
}

/** Whether the map holds a position of this id (a walk of its list). */
export function holdsPosition(map: Readonly<Record<string, Position>>, id: string): boolean {
  for (const p of positionList(map)) if (p.id === id) return true;
  return false;
}

/** netUsd = valueUsd + capitalOutUsd − capitalInUsd (exact): a loss (`lostUsd`) is in it, as value gone. */
export function netUsd(s: VaultState): Fixed {
  return s.valueUsd + s.capitalOutUsd - s.capitalInUsd;
}

/** The agent's contribution: netUsd − marketDeltaUsd, so the two add up to netUsd exactly. */
export function strategyDeltaUsd(s: VaultState): Fixed {
  return netUsd(s) - s.marketDeltaUsd;
}
