import type { Address, VaultState } from '../fold/state.js';
import { statusOf } from '../fold/status.js';
import { pendingRewardsUsd, positionOwedUsd } from '../fold/valuation.js';
import { microsToNumber, toMicros } from '../math/fixed.js';
import type { EquityPointView, FeesView, SnapshotView, StalePriceView } from '../views/index.js';
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
    pendingRewardsUsd: microsToNumber(toMicros(pendingRewardsUsd(s))),
    uncollectedFeesUsd: microsToNumber(toMicros(uncollectedFeesUsd(s))),
    stalePrices: stalePrices(s),
    // the fold knows no dead letters: the projector writes them in (ProjectionTx.markBehind)
    behind: null,
  };
}

function uncollectedFeesUsd(s: VaultState): bigint {
  let v = 0n;
  for (const id in s.positions) v += positionOwedUsd(s, s.positions[id]!);
  return v;
}

/** Whether any price the state knows is older than its feed's heartbeat (no allocation: the projector asks per record). */
function anyPriceStale(s: VaultState): boolean {
  const now = Math.floor(s.updatedAt / 1000);
  for (const token in s.tokens) {
    const t = s.tokens[token as Address]!;
    if (now - t.priceUpdatedAt > t.heartbeat) return true;
  }
  return false;
}

/**
 * Prices older than their feed's heartbeat at the snapshot's block time, for every token the
 * vault's value uses (held, in a position, or pending as a reward), by token address.
 */
export function stalePrices(s: VaultState): StalePriceView[] {
  if (!anyPriceStale(s)) return [];
  const used = new Set<string>([...Object.keys(s.idle), ...Object.keys(s.pendingRewards)]);
  for (const id in s.positions) {
    const p = s.positions[id]!;
    used.add(p.token0);
    used.add(p.token1);
  }
  const now = Math.floor(s.updatedAt / 1000);
  const out: StalePriceView[] = [];
  for (const token of [...used].sort()) {
    const t = s.tokens[token as Address];
    if (!t) continue;
    const age = Math.max(0, now - t.priceUpdatedAt);
    if (age <= t.heartbeat) continue;
    out.push({
      token,
      symbol: t.symbol,
      feed: t.feed,
      priceUpdatedAt: t.priceUpdatedAt * 1000,
      ageSeconds: age,
      heartbeatSeconds: t.heartbeat,
    });
  }
  return out;
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
