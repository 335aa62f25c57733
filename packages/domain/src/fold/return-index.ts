import type { Fixed } from '../math/fixed.js';
import { divRound } from '../math/fixed.js';
import { settleHighWater } from './fees.js';
import type { VaultState } from './state.js';

/**
 * A sub-period starting below this value (1 USD, 10^18 fixed point) has no return: on a base of
 * dust, rounding and stray wei make any figure (a deposit into a vault holding 10^-7 USD would
 * otherwise read as a +100 % day).
 */
export const MIN_RETURN_BASE_USD: Fixed = 10n ** 18n;

type Flows = Pick<VaultState, 'valueUsd' | 'capitalInUsd' | 'capitalOutUsd' | 'returnIndex'>;

/**
 * The return index gross of any fee accrual, from the exact states around a block with no fee
 * (never rounded points): I ← I · (V_after − F) / V_before with F = Δ capital in − Δ capital
 * out; unchanged when V_before < MIN_RETURN_BASE_USD. A loss beyond the whole value floors the
 * index at 0. The fold chains `blockReturnIndex` (net of the fee accrued); this is its rate-0 case.
 */
export function nextReturnIndex(before: Flows, after: Omit<Flows, 'returnIndex'>): Fixed {
  if (before.valueUsd < MIN_RETURN_BASE_USD) return before.returnIndex;
  const flow = after.capitalInUsd - before.capitalInUsd - (after.capitalOutUsd - before.capitalOutUsd);
  const grown = after.valueUsd - flow;
  if (grown <= 0n) return 0n;
  return divRound(before.returnIndex * grown, before.valueUsd);
}

/** A capital flow or fee of a block, valued at the block's prices (USD, 10^18). */
export interface ValuedFlow {
  readonly kind: 'in' | 'out' | 'fee';
  readonly valueUsd: Fixed;
  /** The vault's fee rate (basis points) when the flow was made (a fee's: the rate it was charged at). */
  readonly rateBps: number;
}

/** A vault at a block end: its value, its high water and its fee rate then. */
export interface FeeBasis {
  readonly valueUsd: Fixed;
  readonly highWaterUsd: Fixed;
  readonly rateBps: number;
}

/**
 * The fee accrued and not yet charged: rate · max(0, V − HW), half-even to 10^-18 USD — the fee
 * due (fees.ts `performanceFeeDueUsd`) at every instant, not only when the chain charges it.
 */
export function accruedFeeUsd(valueUsd: Fixed, highWaterUsd: Fixed, rateBps: number): Fixed {
  const gain = valueUsd - highWaterUsd;
  return gain > 0n && rateBps > 0 ? divRound(gain * BigInt(rateBps), 10_000n) : 0n;
}

/** The value net of the fee accrued: what the owner would keep were the fee charged now. */
export function netValueUsd(valueUsd: Fixed, highWaterUsd: Fixed, rateBps: number): Fixed {
  return valueUsd - accruedFeeUsd(valueUsd, highWaterUsd, rateBps);
}

/**
 * The return index after a block, net of the performance fee as it is earned: the index chains
 * over N = V − rate · max(0, V − HW), the value net of the fee accrued and not yet charged
 * (`netValueUsd`), at every point of the block — its start (the previous block end), just before
 * and just after each flow (the value just before flow k is the block's end value less flows k…:
 * in adds, out and fee take away, as the high water and the basket are settled), and its end.
 * The block's earnings count before its first flow (one context a block: inside it only flows
 * move the value). From one point to the next the index moves by N_next / N_prev, except across
 * capital in and out, which are no return (the index restarts from the net value after them).
 * A fee charge is no longer a return of its own: V drops by the charge C and the high water
 * settles (fees.ts `settleHighWater`), so N moves only by what the charge differs from the fee
 * accrued — a charge of exactly the accrual moves nothing, an over-charge is a loss, and the fee
 * of a gain is a return of the days that earned the gain, not of the day (nor of the strategy)
 * it is charged in. A change of the vault's rate re-prices the accrued fee where it happens.
 *
 * Each factor is skipped when its base is under MIN_RETURN_BASE_USD, and a point at or below 0
 * floors the index at 0 — so the figures are those of the same flows in blocks of their own at
 * the same prices. With a rate of 0 this is I · (V_end − F) / V_start (`nextReturnIndex`).
 * `end.highWaterUsd` is the block end's as the fold settled it (the walk's own for the points
 * inside), so the next block starts from exactly this block's end.
 */
export function blockReturnIndex(
  index: Fixed,
  start: FeeBasis,
  end: FeeBasis,
  flows: readonly ValuedFlow[],
): Fixed {
  const n = flows.length;
  const before: Fixed[] = new Array(n);
  let v = end.valueUsd;
  for (let k = n - 1; k >= 0; k--) {
    const f = flows[k]!;
    v = f.kind === 'in' ? v - f.valueUsd : v + f.valueUsd;
    before[k] = v;
  }
  let i = index;
  let base = netValueUsd(start.valueUsd, start.highWaterUsd, start.rateBps);
  let hw = start.highWaterUsd;
  for (let k = 0; k < n; k++) {
    const f = flows[k]!;
    const b = before[k]!;
    const after = k + 1 < n ? before[k + 1]! : end.valueUsd;
    const reached = netValueUsd(b, hw, f.rateBps);
    if (base >= MIN_RETURN_BASE_USD) {
      if (reached <= 0n) return 0n;
      i = divRound(i * reached, base);
    }
    hw = nextHighWater(hw, f, b);
    base = netValueUsd(after, hw, f.rateBps);
    if (f.kind !== 'fee' || reached < MIN_RETURN_BASE_USD) continue;
    if (base <= 0n) return 0n;
    i = divRound(i * base, reached);
  }
  const reached = netValueUsd(end.valueUsd, end.highWaterUsd, end.rateBps);
  if (base < MIN_RETURN_BASE_USD) return i;
  if (reached <= 0n) return 0n;
  return divRound(i * reached, base);
}

/** The high water after flow `f`, the vault worth `before` just before it (fees.ts). */
function nextHighWater(hw: Fixed, f: ValuedFlow, before: Fixed): Fixed {
  if (f.kind === 'in') return hw + f.valueUsd;
  if (f.kind === 'fee') return settleHighWater(hw, before, f.valueUsd, f.rateBps);
  return before > 0n && f.valueUsd > 0n ? divRound(hw * (before - f.valueUsd), before) : hw;
}
