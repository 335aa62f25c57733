import { z } from 'zod';
import { address, decimalString, tick, uintString } from './primitives.js';

/** A token the vault holds or earns, with its USD price at the record's block. */
export const tokenContext = z.object({
  address,
  symbol: z.string().min(1).max(32),
  decimals: z.number().int().min(0).max(36),
  /** USD per whole token, exact decimal string (a Chainlink answer scaled by its decimals). */
  priceUsd: decimalString,
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

/**
 * Valuation context: everything the fold needs to value the vault at this block, read by the
 * indexer with viem at the record's block number. It makes each vault's stream self-contained.
 * `tokens` lists token0, token1 and every reward token the vault has touched.
 */
export const valuationContext = z.object({
  tokens: z.array(tokenContext).min(1),
  pools: z.array(poolContext),
});

export type TokenContext = z.output<typeof tokenContext>;
export type PoolContext = z.output<typeof poolContext>;
export type ValuationContext = z.output<typeof valuationContext>;
