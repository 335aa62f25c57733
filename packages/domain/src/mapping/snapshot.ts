import type { VaultState } from '../fold/state.js';
import { statusOf } from '../fold/status.js';
import { microsToNumber, toMicros } from '../math/fixed.js';
import type { EquityPointView, FeesView, SnapshotView } from '../views/index.js';
import { toPositionViews } from './positions.js';

/**
 * The seed §2.1 snapshot. USD fields are rounded half-even to 6 dp at this edge and the two rules
 * are made exact on the rounded figures: netUsd = valueUsd + capitalOutUsd − capitalInUsd and
 * strategyDeltaUsd = netUsd − marketDeltaUsd are computed in whole micro-dollars, so a client
 * re-checking them sees equality up to float addition of 6-dp numbers. updatedAt is the block
 * timestamp of the last folded record, Unix ms.
 */
export function toSnapshotView(s: VaultState): SnapshotView {
  const value = toMicros(s.valueUsd);
  const capitalIn = toMicros(s.capitalInUsd);
  const capitalOut = toMicros(s.capitalOutUsd);
  const net = value + capitalOut - capitalIn;
  const market = toMicros(s.marketDeltaUsd);
  return {
    vault: s.vault,
    owner: s.owner,
    status: statusOf(s),
    strategy: s.strategy,
    valueUsd: microsToNumber(value),
    capitalInUsd: microsToNumber(capitalIn),
    capitalOutUsd: microsToNumber(capitalOut),
    netUsd: microsToNumber(net),
    strategyDeltaUsd: microsToNumber(net - market),
    marketDeltaUsd: microsToNumber(market),
    positions: toPositionViews(s),
    fees: toFeesView(s),
    suspension: s.suspension
      ? { reason: s.suspension.reason, exitsAvailable: true, since: s.suspension.since }
      : null,
    updatedAt: s.updatedAt,
  };
}

/** Fees object (seed §2.3); definitions in fold/fees.ts. */
export function toFeesView(s: VaultState): FeesView {
  return {
    contributedUsd: microsToNumber(toMicros(s.capitalInUsd)),
    withdrawnUsd: microsToNumber(toMicros(s.capitalOutUsd)),
    taxedUsd: microsToNumber(toMicros(s.taxedUsd)),
    highWaterUsd: microsToNumber(toMicros(s.highWaterUsd)),
  };
}

/** One equity point (seed §2.4) after the last folded record; ts = block timestamp, Unix ms. */
export function toEquityPoint(s: VaultState): EquityPointView {
  return {
    ts: s.updatedAt,
    valueUsd: microsToNumber(toMicros(s.valueUsd)),
    capitalInUsd: microsToNumber(toMicros(s.capitalInUsd)),
    capitalOutUsd: microsToNumber(toMicros(s.capitalOutUsd)),
  };
}
