import { type Fixed, tokenValue } from '../math/fixed.js';
import { getAmountsForLiquidity, type TokenAmounts } from '../math/liquidity-amounts.js';
import type { Address, Position, TokenMark, VaultState } from './state.js';

type Valued = Pick<VaultState, 'tokens' | 'pools' | 'idle' | 'pendingRewards' | 'positions'>;

/** Token amounts a position holds at its pool's last known sqrtPrice (LiquidityAmounts, floor). */
export function positionAmounts(s: Pick<VaultState, 'pools'>, p: Position): TokenAmounts {
  const pool = s.pools[p.pool];
  if (!pool) throw new Error(`invariant: pool ${p.pool} of position ${p.id} has no mark`);
  return getAmountsForLiquidity(pool.sqrtPriceX96, p.sqrtLower, p.sqrtUpper, p.liquidity);
}

function mark(s: Pick<VaultState, 'tokens'>, token: Address): TokenMark {
  const t = s.tokens[token];
  if (!t) throw new Error(`invariant: token ${token} has no mark`);
  return t;
}

export function valueOfToken(s: Pick<VaultState, 'tokens'>, token: Address, raw: bigint): Fixed {
  const t = mark(s, token);
  return tokenValue(raw, t.decimals, t.price);
}

export function positionValueUsd(s: Pick<VaultState, 'tokens' | 'pools'>, p: Position): Fixed {
  const a = positionAmounts(s, p);
  return valueOfToken(s, p.token0, a.amount0) + valueOfToken(s, p.token1, a.amount1);
}

export function pendingRewardsUsd(s: Pick<VaultState, 'tokens' | 'pendingRewards'>): Fixed {
  let v = 0n;
  for (const token in s.pendingRewards) {
    v += valueOfToken(s, token as Address, s.pendingRewards[token as Address] ?? 0n);
  }
  return v;
}

/**
 * valueUsd = Σ idle·price + Σ positions' LiquidityAmounts·price + Σ pending rewards·price.
 * Each term is rounded half-even to 10^-18 USD. Uncollected trading fees are not in it (they are
 * not observable from the records); they enter at fees.collected.
 */
export function computeValueUsd(s: Valued): Fixed {
  let v = 0n;
  for (const token in s.idle) v += valueOfToken(s, token as Address, s.idle[token as Address] ?? 0n);
  for (const id in s.positions) v += positionValueUsd(s, s.positions[id]!);
  return v + pendingRewardsUsd(s);
}
