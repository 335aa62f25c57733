import type { Fixed } from '../math/fixed.js';
import { divRound } from '../math/fixed.js';
import type { VaultState } from './state.js';

/**
 * A sub-period starting below this value (1 USD, 10^18 fixed point) has no return: on a base of
 * dust, rounding and stray wei make any figure (a deposit into a vault holding 10^-7 USD would
 * otherwise read as a +100 % day).
 */
export const MIN_RETURN_BASE_USD: Fixed = 10n ** 18n;

type Flows = Pick<VaultState, 'valueUsd' | 'capitalInUsd' | 'capitalOutUsd' | 'returnIndex'>;

/**
 * The return index after one record, from the exact states around it (never rounded points):
 * I ← I · (V_after − F) / V_before with F = Δ capital in − Δ capital out; unchanged when
 * V_before < MIN_RETURN_BASE_USD. A loss beyond the whole value floors the index at 0.
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
}

/**
 * The return index after a block with fee charges among its flows, each flow settled at its own
 * position: the value just before flow k is the block's end value less flows k… (in adds, out
 * and fee take away), as the high water and the basket are settled. The block's earnings
 * count before its first flow (one context a block: inside it only flows move the value):
 *   I ← I · V_0 / V_start, then I ← I · (V_k − C_k) / V_k for every fee C_k.
 * Capital in and out are no return; a fee is (the owner pays it). Each factor is skipped when its
 * base is under MIN_RETURN_BASE_USD, and a sub-period that ends at or below 0 floors the index at
 * 0 — so the figures are those of the same flows in blocks of their own at the same prices. With
 * no fee this is `nextReturnIndex` (V_0 = V_end − F).
 */
export function blockReturnIndex(
  index: Fixed,
  startValue: Fixed,
  endValue: Fixed,
  flows: readonly ValuedFlow[],
): Fixed {
  const before: Fixed[] = new Array(flows.length);
  let v = endValue;
  for (let k = flows.length - 1; k >= 0; k--) {
    const f = flows[k]!;
    v = f.kind === 'in' ? v - f.valueUsd : v + f.valueUsd;
    before[k] = v;
  }
  let i = index;
  if (startValue >= MIN_RETURN_BASE_USD) {
    if (v <= 0n) return 0n;
    i = divRound(i * v, startValue);
  }
  for (let k = 0; k < flows.length; k++) {
    const f = flows[k]!;
    const b = before[k]!;
    if (f.kind !== 'fee' || b < MIN_RETURN_BASE_USD) continue;
    if (b - f.valueUsd <= 0n) return 0n;
    i = divRound(i * (b - f.valueUsd), b);
  }
  return i;
}
