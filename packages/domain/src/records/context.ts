import { z } from 'zod';
import { address, decimalString, tick, uintString } from './primitives.js';

/** A token the vault holds or earns, with its USD price at the record's block and that price's age. */
export const tokenContext = z.object({
  address,
  symbol: z.string().min(1).max(32),
  decimals: z.number().int().min(0).max(36),
  /** USD per whole token, exact decimal string (the feed's answer scaled by its decimals). */
  priceUsd: decimalString,
  /** The AggregatorV3Interface feed the price was read from (`latestRoundData` at the block). */
  feed: address,
  /** The feed's `updatedAt` (Unix seconds) at the block. */
  priceUpdatedAt: z.number().int().nonnegative(),
  /** The feed's heartbeat in seconds (indexer configuration): older than this the price is stale. */
  heartbeat: z.number().int().positive(),
});

/** The vault's pool state at the record's block (Uniswap v3 slot0 plus identity). */
export const poolContext = z.object({
  address,
  venue: z.string().min(1).max(64),
  feeTier: z.number().int().nonnegative(),
  sqrtPriceX96: uintString,
  tick,
  /** token0 and token1 of the pool, matching entries of `tokens`. */
  token0: address,
  token1: address,
});

/** An amount of one token, raw units. */
export const tokenAmount = z.object({ token: address, amount: uintString });

/**
 * One position the vault holds in a pool at the block: open (liquidity > 0), or closed with
 * tokens still owed. `owed0`/`owed1` are what `collect` would pay after a zero-liquidity burn:
 * the position's tokensOwed plus the fees accrued since its last update, computed with the
 * pool's own fee-growth formula (v3-core Position.update / Tick.getFeeGrowthInside).
 */
export const positionHolding = z
  .object({
    id: uintString,
    pool: address,
    tickLower: tick,
    tickUpper: tick,
    liquidity: uintString,
    owed0: uintString,
    owed1: uintString,
  })
  .refine((p) => p.tickLower < p.tickUpper, 'tickLower must be below tickUpper');

/**
 * What the vault holds at the end of the record's block, read from the chain: every listed
 * token's `balanceOf(vault)`, every live position, the rewards earned and not yet claimed.
 */
export const holdings = z.object({
  balances: z.array(tokenAmount),
  positions: z.array(positionHolding),
  pendingRewards: z.array(tokenAmount),
});

/**
 * Valuation context: everything the fold needs to value the vault at this block, read by the
 * indexer with viem at the record's block number (state after the block's transactions). It makes
 * each vault's stream self-contained: a replay needs no RPC. `tokens` lists token0, token1 and
 * the reward token; every token named in `holdings` is listed in `tokens`.
 */
export const valuationContext = z.object({
  tokens: z.array(tokenContext).min(1),
  pools: z.array(poolContext),
  holdings,
});

export type TokenContext = z.output<typeof tokenContext>;
export type PoolContext = z.output<typeof poolContext>;
export type TokenAmount = z.output<typeof tokenAmount>;
export type PositionHolding = z.output<typeof positionHolding>;
export type Holdings = z.output<typeof holdings>;
export type ValuationContext = z.output<typeof valuationContext>;
