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
