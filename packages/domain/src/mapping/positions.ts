import { entryOf } from '../fold/lp.js';
import type { Position, VaultState } from '../fold/state.js';
import { positionInRange } from '../fold/status.js';
import { pendingRewardsUsd, positionOwedUsd, positionValueUsd } from '../fold/valuation.js';
import { type Fixed, microsToNumber, toMicros } from '../math/fixed.js';
import { rangePrices } from '../math/price.js';
import type { PositionView } from '../views/index.js';
import { timeInRangeOf } from './lp.js';

/** A position with no block time yet (opened in the snapshot's block). */
const NEVER_OPEN = { openMs: 0, inRangeMs: 0 } as const;

const byId = (a: Position, b: Position) => {
  const x = BigInt(a.id);
  const y = BigInt(b.id);
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * Open positions (liquidity > 0), ordered by id (numerically).
 *
 * range: human prices of token0 in token1 ((sqrtRatio / 2^96)² · 10^(dec0 − dec1)); lower/upper from
 * the ticks' exact sqrt ratios, current from the pool's sqrtPriceX96 (math/price.ts `rangePrices`:
 * lower ≤ current < upper exactly when inRange). inRange: tickLower ≤ pool tick < tickUpper.
 *
 * pendingRewardsUsd: rewards accrue to the vault, not to a position. The vault's pending rewards
 * value is attributed to its open positions pro rata by position value (evenly when every position
 * is worth 0), in whole micro-dollars, the remainder going to the last position, so the elements
 * sum exactly to the vault's pending rewards (rounded to 6 dp). This is an attribution of an amount
 * already inside snapshot.valueUsd, not an addition to it. With no open position it is not shown.
 */
export function toPositionViews(s: VaultState): PositionView[] {
  const list = openPositions(s);
  if (list.length === 0) return [];
  const shares = attribute(
    toMicros(pendingRewardsUsd(s)),
    list.map((p) => positionValueUsd(s, p)),
  );
  return list.map((p, i) => {
    const pool = s.pools[p.pool]!;
    const t0 = s.tokens[p.token0]!;
    const t1 = s.tokens[p.token1]!;
    return {
      id: p.id,
      pool: { a: t0.symbol, b: t1.symbol, venue: pool.venue, feeTier: pool.feeTier },
      range: rangePrices(pool, p, t0.decimals, t1.decimals),
      inRange: positionInRange(s, p),
      pendingRewardsUsd: microsToNumber(shares[i]!),
      uncollectedFeesUsd: microsToNumber(toMicros(positionOwedUsd(s, p))),
      timeInRange: s.lp ? timeInRangeOf(entryOf(s.lp.ranges, p.id) ?? NEVER_OPEN) : null,
    };
  });
}

/** Positions with liquidity, by id: closed positions still owed fees are valued, not listed. */
export function openPositions(s: Pick<VaultState, 'positions'>): Position[] {
  return Object.values(s.positions)
    .filter((p) => p.liquidity > 0n)
    .sort(byId);
}

/** Splits `total` micros by `weights` (floor), remainder to the last; evenly if all weights are 0. */
export function attribute(total: bigint, weights: Fixed[]): bigint[] {
  const n = BigInt(weights.length);
  const sum = weights.reduce((a, w) => a + w, 0n);
  const shares = weights.map((w) => (sum > 0n ? (total * w) / sum : total / n));
  const rest = total - shares.reduce((a, x) => a + x, 0n);
  shares[shares.length - 1]! += rest;
  return shares;
}
