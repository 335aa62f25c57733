import { divRound, type Fixed, usdToRaw } from '../math/fixed.js';
import type { Address, VaultState } from './state.js';

/**
 * Performance fee with a high-water mark (for the API description):
 *
 * - contributedUsd: Σ deposits, each valued at its deposit block's prices (= capitalInUsd).
 * - withdrawnUsd: Σ withdrawals, each valued at its withdrawal block's prices (= capitalOutUsd).
 * - taxedUsd: Σ performance fees charged (fee.charged), each valued at its charge block's prices.
 * - highWaterUsd: the vault value above which a performance fee is owed. It starts at 0 and moves
 *   only on flows and charges, never with prices:
 *     deposit of value D:             HW ← HW + D
 *     withdrawal of W, value V before: HW ← HW · (1 − W/V)   (pro rata; unchanged if V = 0)
 *     fee.charged, value V' after:    HW ← max(HW, V')       (the post-fee level; never lowered, so
 *                                     an over-charge cannot make the owner pay twice for a gain)
 *   Between charges the mark does not follow the value up: a gain stays taxable until a charge
 *   crystallises it, and a loss must be recovered before any new fee is due.
 * - The service's rule: fee due = rate · max(0, valueUsd − highWaterUsd) (`performanceFeeDueUsd`).
 *   After a charge of exactly that amount the value is V − rate·(V − HW) ≥ HW, which becomes the new
 *   mark, so the same gain is never taxed twice.
 */
export function performanceFeeDueUsd(
  s: Pick<VaultState, 'valueUsd' | 'highWaterUsd'>,
  rateBps: number,
): Fixed {
  if (!Number.isInteger(rateBps) || rateBps < 0 || rateBps > 10_000) {
    throw new RangeError(`rateBps must be an integer in [0, 10000], got ${rateBps}`);
  }
  const gain = s.valueUsd - s.highWaterUsd;
  return gain > 0n ? divRound(gain * BigInt(rateBps), 10_000n) : 0n;
}

/** The fee due, as raw units of `token` at its last price (floor); 0 if the token is unknown. */
export function performanceFeeDueRaw(s: VaultState, token: Address, rateBps: number): bigint {
  const t = s.tokens[token];
  return t ? usdToRaw(performanceFeeDueUsd(s, rateBps), t.decimals, t.price) : 0n;
}
