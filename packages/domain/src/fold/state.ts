import type { Fixed } from '../math/fixed.js';

export type Address = `0x${string}`;

/** Last known valuation of a token (from the latest record context that listed it). */
export interface TokenMark {
  readonly symbol: string;
  readonly decimals: number;
  /** The context's decimal string, kept to skip re-parsing an unchanged price. */
  readonly priceUsd: string;
  /** USD per whole token, 10^18 fixed point. */
  readonly price: Fixed;
}

/** Last known slot0 of a pool. */
export interface PoolMark {
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
  /** Unix ms of the block that opened it. */
  readonly openedAt: number;
}

export interface Suspension {
  readonly reason: string;
  /** Unix ms of the block of the `suspended` record. */
  readonly since: number;
}

export type TokenMap<T> = Readonly<Record<Address, T>>;

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
  readonly suspension: Suspension | null;

  readonly tokens: TokenMap<TokenMark>;
  readonly pools: TokenMap<PoolMark>;
  /** Raw token balances not in a position (zero entries removed). */
  readonly idle: TokenMap<bigint>;
  /** Rewards earned, not yet claimed, raw units per reward token (zero entries removed). */
  readonly pendingRewards: TokenMap<bigint>;
  /** Open positions by id. */
  readonly positions: Readonly<Record<string, Position>>;

  /** Benchmark basket H: raw token quantities · 10^18 (fractional after pro-rata withdrawals). */
  readonly benchmark: TokenMap<bigint>;

  /** Σ deposits valued at deposit-time prices. Also `fees.contributedUsd`. */
  readonly capitalInUsd: Fixed;
  /** Σ withdrawals valued at withdrawal-time prices. Also `fees.withdrawnUsd`. */
  readonly capitalOutUsd: Fixed;
  /** Σ performance fees charged, valued at charge time. */
  readonly taxedUsd: Fixed;
  /** High-water mark; see fees.ts. */
  readonly highWaterUsd: Fixed;
  /** Σ over price changes of Σ_t H_t · ΔP_t. */
  readonly marketDeltaUsd: Fixed;
  /** Value after the last record: idle + positions + pending rewards, at the last context. */
  readonly valueUsd: Fixed;
}

/** netUsd = valueUsd + capitalOutUsd − capitalInUsd (exact). */
export function netUsd(s: VaultState): Fixed {
  return s.valueUsd + s.capitalOutUsd - s.capitalInUsd;
}

/** The agent's contribution: netUsd − marketDeltaUsd, so the two add up to netUsd exactly. */
export function strategyDeltaUsd(s: VaultState): Fixed {
  return netUsd(s) - s.marketDeltaUsd;
}
