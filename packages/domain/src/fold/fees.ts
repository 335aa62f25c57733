import { divRound, type Fixed, usdToRaw } from '../math/fixed.js';
import { DEFAULT_PERFORMANCE_FEE_BPS } from '../records/payloads.js';
import type { Address, VaultState } from './state.js';

/**
 * Performance fee over a high water (`highWaterUsd`, the fee basis; for the API description):
 *
 * - contributedUsd: Σ the owner's deposits, each valued at its deposit block's prices.
 * - withdrawnUsd: Σ the owner's withdrawals, each valued at its withdrawal block's prices (= capitalOutUsd).
 * - receivedUsd, unexplainedInUsd: Σ tokens received from others, Σ balance increases no event
 *   explains — capital in beside the deposits (capitalInUsd = contributed + received + unexplainedIn):
 *   each moves the high water and the basket as a deposit does.
 * - unexplainedOutUsd: Σ balance decreases no event explains: losses, never capital out — the high
 *   water and the basket keep their level (a loss must be recovered before a fee is due again).
 * - taxedUsd: Σ performance fees charged (fee.charged), each valued at its charge block's prices.
 * - highWaterUsd: the vault value above which a performance fee is owed. It starts at 0 and moves
 *   only on flows and charges, never with prices:
 *     deposit of value D:             HW ← HW + D
 *     withdrawal of W, value V before: HW ← HW · (1 − W/V)   (pro rata; unchanged if V = 0)
 *     fee.charged of C, value V before (= V' + C), gain G = max(0, V − HW):
 *                                     HW ← max(HW, HW + min(C / rate, G) − C)
 *     The charge settles the gain S = C / rate (the gain that owes exactly C at the schedule's
 *     rate), at most G. The high water rises by what that settled gain left in the vault after paying
 *     for it, S − C: a charge of the whole fee due (C = rate·G) puts the high water at the post-fee
 *     value V − C; a partial charge leaves the unsettled gain G − S above the high water, still owing
 *     rate·(G − S); an over-charge never lowers the high water (so the owner never pays twice for a gain).
 *     rate = the vault's own rate when the charge was made (VaultState.performanceFeeBps: set
 *     at creation by VaultCreated, changed by `fee.rate.set` — chain truth, not a constant of the
 *     service; vaults of a factory that emitted no rate: DEFAULT_PERFORMANCE_FEE_BPS, 20 %).
 *   Between charges the high water does not follow the value up: a gain stays taxable until a charge
 *   crystallises it, and a loss must be recovered before any new fee is due.
 *   The high water is per vault (one owner), not per share: flows move it by amount, so a deposit never
 *   creates a fee and a withdrawal takes its pro-rata share of the unsettled gain with it (that
 *   part is never taxed); a later depositor's money is not "behind" an earlier peak.
 * - Fee due = rate · max(0, valueUsd − highWaterUsd) at the vault's rate (`performanceFeeDueUsd`).
 *   After a charge of exactly that amount the value is V − rate·(V − HW) ≥ HW, which becomes the new
 *   mark, so the same gain is never taxed twice.
 * - Fee accrued: the fee due at every instant, earned and not yet charged (return-index.ts
 *   `accruedFeeUsd`). Returns are net of it as it is earned: the return index chains over
 *   V − accrued, so the charge itself moves nothing when it equals the accrual.
 */
/**
 * The reference schedule (basis points): the rate of vaults created before the chain carried one
 * (DEFAULT_PERFORMANCE_FEE_BPS); every other vault's rate is its own (VaultState.performanceFeeBps).
 */
export const PERFORMANCE_FEE_BPS = DEFAULT_PERFORMANCE_FEE_BPS;

/**
 * The high water after a charge of `charge` (USD) when the value before it was `valueBefore`
 * (see above). A rate of 0 settles the whole gain.
 */
export function settleHighWater(
  highWater: Fixed,
  valueBefore: Fixed,
  charge: Fixed,
  rateBps = PERFORMANCE_FEE_BPS,
): Fixed {
  const gain = valueBefore > highWater ? valueBefore - highWater : 0n;
  const byCharge = rateBps > 0 ? divRound(charge * 10_000n, BigInt(rateBps)) : gain;
  const settled = byCharge < gain ? byCharge : gain;
  const next = highWater + settled - charge;
  return next > highWater ? next : highWater;
}
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
