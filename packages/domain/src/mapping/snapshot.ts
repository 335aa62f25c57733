import { type Address, NOTHING_HELD, positionList, type VaultState } from '../fold/state.js';
import { statusOf } from '../fold/status.js';
import { pendingRewardsUsd, positionOwedUsd } from '../fold/valuation.js';
import { microsToNumber, toMicros } from '../math/fixed.js';
import { vaultIdOf } from '../records/vault-id.js';
import type {
  EquityPointView,
  FeesView,
  SnapshotView,
  StalePriceView,
  UnpricedFlowView,
} from '../views/index.js';
import { wholeTokens } from './amounts.js';
import { holdValueUsd, toLpView } from './lp.js';
import { toPositionViews } from './positions.js';

/**
 * The seed §2.1 snapshot. USD fields are rounded half-even to 6 dp at this edge and the two rules
 * are made exact on the rounded figures: netUsd = valueUsd + capitalOutUsd − capitalInUsd and
 * strategyDeltaUsd = netUsd − marketDeltaUsd are computed in whole micro-dollars, so a client
 * re-checking them sees equality up to float addition of 6-dp numbers. updatedAt is the block
 * timestamp of the block end the figures stand at, Unix ms; blockNumber that block.
 *
 * Block-end figures only (`shownState`): a state inside a block (a batch cut the block) pairs the
 * block's end holdings with only part of its flows — a deposit would read as a gain — so it is
 * shown as the vault stood at its previous block end.
 */
export function toSnapshotView(state: VaultState): SnapshotView {
  const s = shownState(state);
  const value = toMicros(s.valueUsd);
  const capitalIn = toMicros(s.capitalInUsd);
  const capitalOut = toMicros(s.capitalOutUsd);
  const net = value + capitalOut - capitalIn;
  const market = toMicros(s.marketDeltaUsd);
  return {
    // Identity first, as migration 0028 writes it into stored snapshots (`{"id":…,"chainId":…,"vault":…`).
    id: vaultIdOf(s),
    chainId: s.chainId,
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
    blockNumber: s.blockNumber,
    pendingRewardsUsd: microsToNumber(toMicros(pendingRewardsUsd(s))),
    uncollectedFeesUsd: microsToNumber(toMicros(uncollectedFeesUsd(s))),
    stalePrices: stalePrices(s),
    drain: s.drain
      ? {
          since: s.drain.since,
          blockNumber: s.drain.blockNumber,
          lostUsd: microsToNumber(toMicros(s.drain.lostUsd)),
        }
      : null,
    unpricedFlows: unpricedFlows(s),
    lp: toLpView(s),
    // the fold knows no dead letters: the projector writes them in (ProjectionTx.markBehind)
    behind: null,
  };
}

/**
 * The state a snapshot shows: the state itself at a block end; inside a block, the vault at its
 * previous block end — and a vault created in the open block as it stood before anything reached
 * it (no value, no capital, idle), its identity as created.
 */
export function shownState(s: VaultState): VaultState {
  const open = s.blockStart;
  if (!open) return s;
  if (open.end) return open.end;
  return { ...s, ...NOTHING_HELD, blockStart: undefined, updatedAt: s.createdAt, records: 0 };
}

function uncollectedFeesUsd(s: VaultState): bigint {
  let v = 0n;
  for (const p of positionList(s.positions)) v += positionOwedUsd(s, p);
  return v;
}

/** Whether any price the state knows is stale or invalid (no allocation: the projector asks per record). */
function anyPriceFlagged(s: VaultState): boolean {
  const now = Math.floor(s.updatedAt / 1000);
  for (const token in s.tokens) {
    const t = s.tokens[token as Address]!;
    if (t.priceInvalid || now - t.priceUpdatedAt > t.heartbeat) return true;
  }
  return false;
}

/**
 * Every price a served figure used that is stale (older than its feed's heartbeat at the
 * snapshot's block time) or invalid (the feed's latest answer was no price: the last valid one is
 * used), by token address: tokens held, in a position, pending as a reward, and those of the
 * benchmark basket (marketDeltaUsd moves with their prices even when none is held any more).
 */
export function stalePrices(s: VaultState): StalePriceView[] {
  if (!anyPriceFlagged(s)) return [];
  const used = new Set<string>([
    ...Object.keys(s.idle),
    ...Object.keys(s.pendingRewards),
    ...Object.keys(s.benchmark),
  ]);
  for (const p of positionList(s.positions)) {
    used.add(p.token0);
    used.add(p.token1);
  }
  const now = Math.floor(s.updatedAt / 1000);
  const out: StalePriceView[] = [];
  for (const token of [...used].sort()) {
    const t = s.tokens[token as Address];
    if (!t) continue;
    const age = Math.max(0, now - t.priceUpdatedAt);
    if (!t.priceInvalid && age <= t.heartbeat) continue;
    out.push({
      token,
      symbol: t.symbol,
      feed: t.feed,
      priceUpdatedAt: t.priceUpdatedAt * 1000,
      ageSeconds: age,
      heartbeatSeconds: t.heartbeat,
      reason: t.priceInvalid ? 'invalid' : 'stale',
    });
  }
  return out;
}

/** The flows waiting for their token's first valid price (VaultState.unpriced), in log order. */
export function unpricedFlows(s: VaultState): UnpricedFlowView[] {
  return s.unpriced.map((f) => {
    const t = s.tokens[f.token];
    if (!t) throw new Error(`invariant: unpriced token ${f.token} is unknown`);
    return {
      token: f.token,
      symbol: t.symbol,
      flow: f.source,
      amount: wholeTokens(f.raw, t.decimals),
      blockNumber: f.blockNumber,
    };
  });
}

/**
 * Fees object (seed §2.3); definitions in fold/fees.ts. The flows by source: the owner's deposits
 * and withdrawals as they are, tokens received and unexplained changes apart
 * (capitalInUsd = contributed + received + unexplainedIn; capitalOutUsd = withdrawn).
 */
export function toFeesView(s: VaultState): FeesView {
  const m = (x: bigint) => microsToNumber(toMicros(x));
  return {
    contributedUsd: m(s.depositedUsd),
    withdrawnUsd: m(s.capitalOutUsd),
    taxedUsd: m(s.taxedUsd),
    highWaterUsd: m(s.highWaterUsd),
    receivedUsd: m(s.receivedUsd),
    unexplainedInUsd: m(s.unexplainedInUsd),
    unexplainedOutUsd: m(s.lostUsd),
  };
}

/** One equity point (seed §2.4) after the last folded record; ts = block timestamp, Unix ms. */
export function toEquityPoint(s: VaultState): EquityPointView {
  return {
    ts: s.updatedAt,
    blockNumber: s.blockNumber,
    valueUsd: microsToNumber(toMicros(s.valueUsd)),
    capitalInUsd: microsToNumber(toMicros(s.capitalInUsd)),
    capitalOutUsd: microsToNumber(toMicros(s.capitalOutUsd)),
    holdValueUsd: s.lp ? microsToNumber(toMicros(holdValueUsd(s))) : null,
  };
}
