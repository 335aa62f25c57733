import { type Fixed, tokenValue } from '../math/fixed.js';
import { getAmountsForLiquidity, type TokenAmounts } from '../math/liquidity-amounts.js';
import { type Address, type Position, positionList, type TokenPrice, type VaultState } from './state.js';

type Valued = Pick<VaultState, 'tokens' | 'pools' | 'idle' | 'pendingRewards' | 'positions'>;

/** Token amounts a position holds at its pool's last known sqrtPrice (LiquidityAmounts, floor). */
export function positionAmounts(s: Pick<VaultState, 'pools'>, p: Position): TokenAmounts {
  const pool = s.pools[p.pool];
  if (!pool) throw new Error(`invariant: pool ${p.pool} of position ${p.id} has no price`);
  return getAmountsForLiquidity(pool.sqrtPriceX96, p.sqrtLower, p.sqrtUpper, p.liquidity);
}

function priceOf(s: Pick<VaultState, 'tokens'>, token: Address): TokenPrice {
  const t = s.tokens[token];
  if (!t) throw new Error(`invariant: token ${token} has no price`);
  return t;
}

export function valueOfToken(s: Pick<VaultState, 'tokens'>, token: Address, raw: bigint): Fixed {
  const t = priceOf(s, token);
  return tokenValue(raw, t.decimals, t.price);
}

/** A position's liquidity at the pool's sqrtPrice plus what the pool owes it (fees, tokensOwed). */
export function positionValueUsd(s: Pick<VaultState, 'tokens' | 'pools'>, p: Position): Fixed {
  const a = positionAmounts(s, p);
  return valueOfToken(s, p.token0, a.amount0 + p.owed0) + valueOfToken(s, p.token1, a.amount1 + p.owed1);
}

/** The uncollected part of a position's value: owed tokens (tokensOwed + accrued fees). */
export function positionOwedUsd(s: Pick<VaultState, 'tokens'>, p: Position): Fixed {
  return valueOfToken(s, p.token0, p.owed0) + valueOfToken(s, p.token1, p.owed1);
}

export function pendingRewardsUsd(s: Pick<VaultState, 'tokens' | 'pendingRewards'>): Fixed {
  let v = 0n;
  for (const token in s.pendingRewards) {
    v += valueOfToken(s, token as Address, s.pendingRewards[token as Address] ?? 0n);
  }
  return v;
}

/**
 * valueUsd = Σ balances·price + Σ positions' (LiquidityAmounts at the pool's sqrtPrice + owed
 * tokens, uncollected fees included)·price + Σ pending rewards·price — all as read from the chain
 * at the record's block. Each term is rounded half-even to 10^-18 USD.
 */
export function computeValueUsd(s: Valued): Fixed {
  let v = 0n;
  for (const token in s.idle) v += valueOfToken(s, token as Address, s.idle[token as Address] ?? 0n);
  for (const p of positionList(s.positions)) v += positionValueUsd(s, p);
  return v + pendingRewardsUsd(s);
}
