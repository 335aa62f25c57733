/**
 * The bodies of the read API, owned by the client (no import of the service). The reader checks
 * that its response schemas infer exactly these types (services/reader/src/openapi/client-types.test.ts),
 * so a change on either side is a type error until both agree.
 *
 * Conventions (see the API description, /openapi.json): addresses and hashes are lowercase `0x…`
 * strings; timestamps are Unix milliseconds (integers); fields ending in `Usd` are US dollars as
 * JSON numbers; ledger amounts are raw token units as decimal strings (exact, unscaled).
 */

/** `0x` + hex, lowercase (as the ledger payloads carry them). */
export type Hex = `0x${string}`;
/** Unsigned integer as a decimal string (token amounts in raw units, liquidity, position ids). */
export type UintString = string;
/** Signed integer as a decimal string. */
export type IntString = string;

export type VaultStatus = 'idle' | 'aiming' | 'earning' | 'attention' | 'exiting' | 'suspended';

export interface Position {
  /** Position id: the onchain uint256 as a decimal string. */
  id: string;
  pool: { a: string; b: string; venue: string; feeTier: number };
  /** Human prices of token0 in units of token1 (decimals applied), never ticks. */
  range: { lower: number; upper: number; current: number };
  inRange: boolean;
  pendingRewardsUsd: number;
  uncollectedFeesUsd: number;
  /**
   * This position's time in range since it was opened (a rebalance keeps its id and its time).
   * Null on vaults folded before fold version 5 until a rebuild; absent from snapshots written before.
   */
  timeInRange?: TimeInRange | null | undefined;
}

/** A share of block time in range (a position's, or the vault's: `Lp.timeInRange`). */
export interface TimeInRange {
  /** inRangeMs / openMs, a fraction (6 dp); null before any block time open. */
  share: number | null;
  /** Block time open and in range, ms. */
  inRangeMs: number;
  /** Block time open (liquidity > 0), ms. */
  openMs: number;
}

/**
 * The LP figures of a snapshot (`Snapshot.lp`): what LP dashboards show, from the log alone.
 * Definitions (formula, unit, edge cases): the "LP figures" section of the API description.
 * USD figures are JSON numbers (6 dp), token amounts whole tokens as exact decimal strings,
 * fractions 0.12 = 12 %.
 */
export interface Lp {
  /** The vault against simply holding what was put in. */
  hold: {
    /** The benchmark basket (the tokens put in, scaled by withdrawals) at the snapshot's prices. */
    valueUsd: number;
    /** Snapshot valueUsd − hold.valueUsd: what the vault made beyond holding. */
    leadUsd: number;
  };
  /** Trading fees, in USD at the price when earned and in token terms. */
  tradingFees: {
    /** Collected + owed by the pools, each part valued at the block end where it first appeared. */
    earnedUsd: number;
    /** Owed by the pools now, at the snapshot's prices. */
    uncollectedUsd: number;
    /** earnedUsd / time-weighted capital × 365 days; null until a day of history worth ≥ 1 USD. */
    apr: number | null;
    tokens: LpFeeToken[];
  };
  /** Incentive rewards, claimed and pending apart. */
  rewards: {
    /** Claimed + pending, each part valued at the block end where it first appeared. */
    earnedUsd: number;
    /** Σ claims, each at its block's prices. */
    claimedUsd: number;
    /** Earned and not claimed, at the snapshot's prices. */
    pendingUsd: number;
    /** As tradingFees.apr, of rewards.earnedUsd. */
    apr: number | null;
    tokens: LpRewardToken[];
  };
  /** netUsd split by where it came from: the five add up to netUsd exactly (in micro-dollars). */
  attribution: {
    tradingFeesUsd: number;
    rewardsUsd: number;
    /** − fees.taxedUsd. */
    performanceFeesUsd: number;
    /** − fees.unexplainedOutUsd. */
    lossesUsd: number;
    /** The rest: price moves of what the vault held (market and divergence). */
    priceUsd: number;
  };
  /** The positions' value without fees against holding what went into them (negative: a loss). */
  divergence: {
    /** realisedUsd + unrealisedUsd. */
    usd: number;
    realisedUsd: number;
    unrealisedUsd: number;
  };
  /** The vault as a whole: time with an open position, and of it with every open position in range. */
  timeInRange: TimeInRange;
  /**
   * count: position.rebalanced records; swaps: the vault's own swaps, costUsd what they gave up
   * (value paid − value received at the feeds' prices of their blocks) = swapFeesUsd (the pool's
   * fee) + priceImpactUsd (the rest).
   */
  rebalances: { count: number; swaps: number; costUsd: number; swapFeesUsd: number; priceImpactUsd: number };
  /** Of the return index, at block ends (fractions, 0..1). */
  drawdown: { max: number; current: number };
  /** PnL in token terms, per token the vault ever held or moved, by address. */
  tokens: LpToken[];
}

/** Trading fees of one token (`Lp.tradingFees.tokens`), whole tokens. */
export interface LpFeeToken {
  token: string;
  symbol: string;
  /** collected + uncollected. */
  earned: string;
  collected: string;
  uncollected: string;
}

/** Rewards of one token (`Lp.rewards.tokens`), whole tokens. */
export interface LpRewardToken {
  token: string;
  symbol: string;
  claimed: string;
  pending: string;
}

/** PnL of one token in token terms (`Lp.tokens`), whole tokens. */
export interface LpToken {
  token: string;
  symbol: string;
  /** Idle + in positions at the pool price + owed + pending rewards. */
  held: string;
  /** Put in: deposits, tokens and liquidity received, unexplained inflows. */
  in: string;
  /** Taken out: withdrawals. */
  out: string;
  /** held − in + out (signed). */
  pnl: string;
}

export interface Fees {
  /** Σ the owner's deposits. */
  contributedUsd: number;
  /** Σ the owner's withdrawals (= capitalOutUsd). */
  withdrawnUsd: number;
  taxedUsd: number;
  highWaterUsd: number;
  /** Σ tokens and liquidity received from others (capital in). Absent before fold version 4. */
  receivedUsd?: number | undefined;
  /** Σ balance increases no vault event explains (capital in). Absent before fold version 4. */
  unexplainedInUsd?: number | undefined;
  /** Σ balance decreases no vault event explains: losses, in netUsd. Absent before fold version 4. */
  unexplainedOutUsd?: number | undefined;
}

/** An outflow no vault event explains since the owner last acted (`Snapshot.drain`). */
export interface Drain {
  since: number;
  blockNumber: number;
  lostUsd: number;
}

export interface Suspension {
  reason: string;
  exitsAvailable: true;
  since: number;
}

export interface StalePrice {
  token: string;
  symbol: string;
  feed: string;
  priceUpdatedAt: number;
  ageSeconds: number;
  heartbeatSeconds: number;
  reason: 'stale' | 'invalid';
}

export interface Behind {
  deadLetters: number;
  kinds: ('decode' | 'envelope' | 'fold' | 'gap')[];
  first: { partition: number; offset: string };
  gap?:
    | {
        lastSeq: number | null;
        missingFrom: number;
        missingTo: number;
        fromBlock: number;
        toBlock: number;
      }
    | undefined;
}

/**
 * A vault's id: its chain and address as a CAIP-10 account id, `eip155:{chainId}:{address}`
 * (address lowercase). The same address may be a vault on several chains: the id names one.
 */
export type VaultId = string;

/** `GET /v1/vault/{vault}/snapshot`: the live state of one vault. */
export interface Snapshot {
  /** The vault's id, `eip155:{chainId}:{address}`. */
  id: VaultId;
  /** The vault's chain (EIP-155 chain id). */
  chainId: number;
  /** The vault's address on that chain. */
  vault: string;
  owner: string;
  status: VaultStatus;
  strategy: string;
  valueUsd: number;
  capitalInUsd: number;
  capitalOutUsd: number;
  /** valueUsd + capitalOutUsd − capitalInUsd. */
  netUsd: number;
  strategyDeltaUsd: number;
  marketDeltaUsd: number;
  positions: Position[];
  fees: Fees;
  suspension: Suspension | null;
  updatedAt: number;
  blockNumber: number;
  pendingRewardsUsd: number;
  uncollectedFeesUsd: number;
  stalePrices: StalePrice[];
  /** A loss no vault event explains since the owner last acted (absent before fold version 4). */
  drain?: Drain | null | undefined;
  /** Flows waiting for their token's first valid price (absent on snapshots before fold version 4). */
  unpricedFlows?: UnpricedFlow[] | undefined;
  /**
   * The LP figures (vs holding, fees and rewards earned, APRs, attribution, divergence, time in
   * range, rebalances, drawdown, PnL in tokens). Null on vaults folded before fold version 5 until
   * a rebuild; absent from snapshots written before.
   */
  lp?: Lp | null | undefined;
  behind?: Behind | null | undefined;
}

/** Where a flow came from (`UnpricedFlow.flow`). */
export type FlowSource = 'deposit' | 'withdrawal' | 'received' | 'unexplainedIn' | 'unexplainedOut' | 'fee';

/** A flow of a token that never had a valid price yet: in no USD figure until its first one. */
export interface UnpricedFlow {
  token: string;
  symbol: string;
  flow: FlowSource;
  /** Whole tokens, exact decimal string. */
  amount: string;
  blockNumber: number;
}

/** One point of `GET /v1/vault/{vault}/equity` (oldest first). */
export interface EquityPoint {
  /** The vault's chain. */
  chainId: number;
  ts: number;
  blockNumber: number;
  valueUsd: number;
  capitalInUsd: number;
  capitalOutUsd: number;
  /**
   * The benchmark basket at the point (`Lp.hold.valueUsd` then): the vs-holding line. Null on
   * points of vaults folded before fold version 5 until a rebuild.
   */
  holdValueUsd?: number | null | undefined;
}

/** The `data` of a ledger row, by its `type` (payloads as recorded; amounts in raw token units). */
export interface LedgerData {
  'vault.created': {
    owner: Hex;
    strategy: string;
    token0: Hex;
    token1: Hex;
    pool: Hex;
    /** Basis points of the gain; absent when the factory emitted no rate (20 % applies). */
    performanceFeeBps?: number | undefined;
  };
  deposit: { from: Hex; token: Hex; amount: UintString };
  withdrawal: { to: Hex; token: Hex; amount: UintString };
  'position.opened': {
    positionId: UintString;
    pool: Hex;
    tickLower: number;
    tickUpper: number;
    liquidity: UintString;
    amount0: UintString;
    amount1: UintString;
  };
  'position.resized': {
    positionId: UintString;
    liquidity: UintString;
    amount0Delta: IntString;
    amount1Delta: IntString;
  };
  'position.rebalanced': {
    positionId: UintString;
    tickLower: number;
    tickUpper: number;
    liquidity: UintString;
    amount0Out: UintString;
    amount1Out: UintString;
    amount0In: UintString;
    amount1In: UintString;
  };
  'position.closed': { positionId: UintString; amount0: UintString; amount1: UintString };
  'fees.collected': { positionId: UintString; amount0: UintString; amount1: UintString };
  'rewards.accrued': { rewardToken: Hex; amount: UintString };
  'rewards.claimed': { rewardToken: Hex; amount: UintString };
  'fee.charged': { token: Hex; amount: UintString; recipient: Hex };
  suspended: { reason: string };
  resumed: Record<string, never>;
  'exit.requested': Record<string, never>;
  'exit.completed': Record<string, never>;
  'strategy.selected': { strategy: string };
  'fee.rate.set': { performanceFeeBps: number };
  'transfer.received': { from: Hex; token: Hex; amount: UintString };
  'position.received': {
    from: Hex;
    pool: Hex;
    tickLower: number;
    tickUpper: number;
    liquidity: UintString;
    amount0: UintString;
    amount1: UintString;
  };
  /** The vault swapped idle tokens in its own pool: amountIn of tokenIn paid, amountOut of tokenOut received. */
  swap: { tokenIn: Hex; amountIn: UintString; tokenOut: Hex; amountOut: UintString };
  'balance.reconciled': {
    token: Hex;
    /** Signed: positive = more than the events explain. */
    amount: IntString;
    /** USD value of |amount|, exact decimal string; null when the token had no valid price yet. */
    valueUsd: string | null;
    /** loss: less than the events explain, value gone (in netUsd); capitalOut on rows before fold version 4. */
    bookedAs: 'capitalIn' | 'loss' | 'capitalOut';
  };
}

/** A ledger event type (the `type` query parameter and a row's `type`). */
export type LedgerType = keyof LedgerData;

/** Every ledger type, in the API's order (the `type` filter takes any of them). */
export const LEDGER_TYPES = [
  'vault.created',
  'deposit',
  'withdrawal',
  'position.opened',
  'position.resized',
  'position.rebalanced',
  'position.closed',
  'fees.collected',
  'rewards.accrued',
  'rewards.claimed',
  'fee.charged',
  'suspended',
  'resumed',
  'exit.requested',
  'exit.completed',
  'strategy.selected',
  'fee.rate.set',
  'transfer.received',
  'position.received',
  'swap',
  'balance.reconciled',
] as const satisfies readonly LedgerType[];

/** The columns every ledger row has, whatever its type. */
export interface LedgerColumns {
  /** Stable row id: chainId:blockHash:txHash:logIndex:vault. */
  id: string;
  vault: string;
  /** The vault's chain: the row's vault is `eip155:{chainId}:{vault}`. */
  chainId: number;
  txHash: string;
  blockNumber: number;
  blockHash: string;
  txIndex: number;
  logIndex: number;
  /** Block time, Unix milliseconds. */
  ts: number;
  /**
   * The row's token amounts as people read them: symbol, whole tokens, USD at its block ([] for a
   * type without amounts; null on rows projected before migration 0018 until a rebuild).
   */
  amounts: LedgerAmount[] | null;
}

/** A token amount of a ledger row: payload field, token and symbol, whole tokens (exact), USD at the row's block. */
export interface LedgerAmount {
  field: string;
  token: string;
  symbol: string;
  /** Whole tokens, exact decimal string, signed where the field is. */
  amount: string;
  /** USD at the row's block; null when the token had no valid price yet there (never 0). */
  valueUsd: number | null;
}

/** A ledger row of one type: `data` has that type's shape. */
export type LedgerRowOf<T extends LedgerType> = LedgerColumns & { type: T; data: LedgerData[T] };

/**
 * One row of the activity ledger: a union discriminated by `type`, so narrowing on `row.type`
 * types `row.data` (`if (row.type === 'deposit') row.data.amount`).
 */
export type LedgerRow = { [T in LedgerType]: LedgerRowOf<T> }[LedgerType];

/** One entry of `GET /v1/vaults`. */
export interface VaultSummary {
  /** The vault's id, `eip155:{chainId}:{address}`. */
  id: VaultId;
  chainId: number;
  /** The vault's address on chainId. */
  vault: string;
  owner: string;
  strategy: string;
  status: VaultStatus;
  valueUsd: number;
  netUsd: number;
  createdAt: number;
  updatedAt: number;
}

/** One entry of `GET /v1/strategies`. */
export interface Strategy {
  id: string;
  name: string;
  description: string;
  riskNote: string;
  pairs: { a: string; b: string; venues: string[] }[];
  /** Realised annualised return as a fraction; null until enough history; never a projection. */
  liveApr: number | null;
  sigma: number | null;
  /** The LP figures over the strategy's member vaults; every one null while liveApr is null. */
  lp: StrategyLpFigures;
}

/**
 * A strategy's LP figures (`Strategy.lp`), realised only, over its member vaults while they ran it
 * (definitions: the API description's "LP figures"). Fractions (0.12 = 12 %), 6 dp.
 */
export interface StrategyLpFigures {
  /** Σ trading fees earned × 365 days / Σ ∫ value dt: fee income on time-weighted capital. */
  feeApr: number | null;
  /** As feeApr, of the rewards earned. */
  rewardApr: number | null;
  /** Σ block time with every open position in range / Σ block time with one open. */
  timeInRange: number | null;
  /** Σ rebalances × 7 days / Σ block time funded (worth at least 1 USD). */
  rebalancesPerWeek: number | null;
  /** As feeApr, of the divergence realised (negative: a loss against holding). */
  divergenceApr: number | null;
  /** Largest fall from a peak of the strategy's chained daily returns. */
  maxDrawdown: number | null;
}

export type AssetCategory = 'major' | 'stable' | 'stock token' | 'meme';

/** One entry of `GET /v1/universe`. */
export interface UniverseAsset {
  chainId: number;
  address: string;
  symbol: string;
  name: string;
  category: AssetCategory;
  decimals: number;
  venues: string[];
  liquidityUsd: number;
}

/** One entry of `GET /v1/universe/pairs`. */
export interface UniversePair {
  chainId: number;
  a: string;
  b: string;
  tokenA: string;
  tokenB: string;
  venues: string[];
  tvlUsd: number;
  emissions: boolean;
}

export type ErrorCode =
  | 'invalid_request'
  | 'not_found'
  | 'ambiguous_vault'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'unavailable'
  | 'unauthorized'
  | 'internal';

/** The one error body of every 4xx / 5xx answer. */
export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    /**
     * `ambiguous_vault` (409) only: the ids of the vaults a bare address names (one per chain,
     * ascending chain id); ask again with one of them.
     */
    candidates?: VaultId[] | undefined;
  };
}

/** A block of a chain (`GET /v1/chains`). */
export interface ChainBlock {
  blockNumber: number;
  /** Its block time, Unix ms; null when not kept. */
  blockTime: number | null;
}

/** One entry of `GET /v1/chains`: a chain the deployment follows. */
export interface Chain {
  chainId: number;
  /** Vaults served on the chain. */
  vaults: number;
  /** The newest block the indexer has read on the chain; null when the reader cannot see the indexer. */
  head: ChainBlock | null;
  /** The newest block the indexer published to the log, and when (Unix ms). */
  checkpoint: (ChainBlock & { updatedAt: number }) | null;
  /** The newest block of the chain folded into the served figures; null before any. */
  folded: ChainBlock | null;
  /** The indexer's lag: head − checkpoint blocks, and seconds since the checkpoint block's time. */
  lag: { blocks: number | null; seconds: number | null };
  /** How far the served figures are behind the checkpoint (upper bounds). */
  foldedLag: { blocks: number | null; seconds: number | null };
}

export interface Health {
  status: 'ok';
}

/** `/ready`: the status for everyone; the details only with the admin token. */
export interface Ready {
  status: 'ready';
  schema?: string;
  migration?: number;
  deadLetters?: number;
  vaultsBehind?: number;
  /** How far the projection is behind the log and the chain (see the OpenAPI text of /ready). */
  lag?: ReadyLag;
}

/** `/ready`'s lag (admin token only); null where the reader cannot know it. */
export interface ReadyLag {
  /** Records of the log not yet folded. */
  records: number | null;
  /** Blocks between a chain's indexer checkpoint and the newest block folded of its vaults, for the chain furthest behind (`chainId`). */
  blocks: number | null;
  /** Chain time between them, seconds. */
  seconds: number | null;
  foldedBlock: number | null;
  headBlock: number | null;
  /** The chain those figures are of (null: no checkpoint readable). */
  chainId: number | null;
  /** Why `records` is null. */
  recordsUnknown?: string;
}

/** Query of `/v1/tx/{hash}`: a page of the transaction's rows. */
export interface TxQuery {
  limit?: number;
  cursor?: string;
}

// ---- live streams (GET /v1/vault/{vault}/stream, GET /v1/stream) -----------------------------

/** `data` of a `snapshot` event: the vault's snapshot with the ETag GET snapshot gives it. */
export interface StreamSnapshotEvent {
  /** The vault's id, `eip155:{chainId}:{address}`. */
  id: VaultId;
  chainId: number;
  vault: string;
  /** Entity tag (quoted), as GET snapshot's `ETag`. */
  etag: string;
  snapshot: Snapshot;
}

/**
 * `data` of a `retract` event: a chain reorganisation orphaned the blocks of these ledger rows of
 * the vault; they are gone from GET events (the canonical chain's rows, if any, arrive as `ledger`
 * events). Sent before the commit's new rows and snapshot.
 */
export interface StreamRetractEvent {
  /** The vault's id, `eip155:{chainId}:{address}`. */
  id: VaultId;
  chainId: number;
  vault: string;
  /** LedgerRow ids, ascending: every row removed (also of types the stream does not send). */
  ids: string[];
}

/** `data` of a `reset` event: the stream could not resume where asked and goes on from now. */
export interface StreamResetEvent {
  reason: string;
  /** The cursor the stream goes on from. */
  cursor: string;
}

/**
 * Where a subscription stands: `connecting` (first attempt), `live` (events flowing),
 * `reconnecting` (lost or refused: trying again after `retryInMs`; poll meanwhile),
 * `closed` (ended by the signal, or by an answer that a retry cannot change: 400, 404).
 */
export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface StreamStateInfo {
  /** The HTTP status of a refused attempt (503: too many streams, or the database down). */
  status?: number;
  /** When the next attempt is made, ms from now. */
  retryInMs?: number;
  /** What ended the last attempt. */
  error?: unknown;
}

/** What a subscription calls; each event comes with its id (the stream cursor). */
export interface StreamHandlers {
  snapshot?(event: StreamSnapshotEvent, id: string): void;
  ledger?(row: LedgerRow, id: string): void;
  retract?(event: StreamRetractEvent, id: string): void;
  reset?(event: StreamResetEvent, id: string): void;
  state?(state: StreamState, info: StreamStateInfo): void;
}

export interface SubscribeOptions {
  /** Ends the subscription. */
  signal?: AbortSignal;
  /** Resume after this event id (a cursor received earlier). */
  lastEventId?: string;
  /** First wait before reconnecting, ms (doubled on each failure up to maxRetryMs; default 1000). */
  retryMs?: number;
  /** Longest wait before reconnecting, ms (default 30 000). */
  maxRetryMs?: number;
}

export interface Subscription {
  /** The id of the last event received (what a reconnection sends as `Last-Event-ID`). */
  readonly lastEventId: string | undefined;
  readonly state: StreamState;
  /** Ends the subscription (as aborting its signal does). */
  close(): void;
  /** Settles once the subscription is closed. */
  readonly closed: Promise<void>;
}
