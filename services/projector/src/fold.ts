import {
  createVaultState,
  type DecodeResult,
  decodeRecord,
  deserializeState,
  evolve,
  formatFixed,
  isFoldError,
  recordId,
  serializeState,
  toMicros,
  toPositionViews,
  toSnapshotView,
  type VaultRecord,
  type VaultState,
} from '@vault-yield/domain';
import type { EquityRow, LedgerPosition, LedgerRow, PositionRow, SnapshotRow } from '@vault-yield/store';

/** The projector's use of the pure fold (packages/domain), plus the row mappings it writes. */

export type Decoded = DecodeResult;
export const decode = (value: Buffer | null): Decoded => decodeRecord(value);

/** Folds one record; a refusal is a value (the caller dead-letters it and keeps its state). */
export type FoldStep = { ok: true; state: VaultState } | { ok: false; reason: string; crashed: boolean };

export function foldStep(state: VaultState | null, record: VaultRecord): FoldStep {
  try {
    return { ok: true, state: state ? evolve(state, record) : createVaultState(record) };
  } catch (err) {
    // A FoldError is the fold refusing an impossible record. Anything else is a bug in the fold:
    // it is just as deterministic, so it is dead-lettered the same way (never a crash loop) and
    // flagged `crashed` for the logs.
    if (isFoldError(err)) return { ok: false, reason: `fold: ${err.message}`, crashed: false };
    return { ok: false, reason: `fold crashed: ${(err as Error).message ?? String(err)}`, crashed: true };
  }
}

export const positionOf = (r: VaultRecord): LedgerPosition => ({
  blockNumber: r.blockNumber,
  txIndex: r.txIndex,
  logIndex: r.logIndex,
});

export function ledgerRow(r: VaultRecord): LedgerRow {
  return {
    vault: r.vault,
    chainId: r.chainId,
    blockHash: r.blockHash,
    txHash: r.txHash,
    logIndex: r.logIndex,
    blockNumber: r.blockNumber,
    txIndex: r.txIndex,
    ts: r.blockTimestamp * 1000,
    type: r.type,
    record: JSON.stringify(r),
  };
}

/**
 * Equity points: one per applied record that changed value or flows at the JSON edge's precision
 * (6 dp), plus the vault's first record. Decided by comparing with the state before the record,
 * so the series is the same whatever the batch boundaries (and after a re-fold).
 */
export function equityRow(before: VaultState | null, after: VaultState): EquityRow | null {
  const value = toMicros(after.valueUsd);
  const capitalIn = toMicros(after.capitalInUsd);
  const capitalOut = toMicros(after.capitalOutUsd);
  if (
    before &&
    toMicros(before.valueUsd) === value &&
    toMicros(before.capitalInUsd) === capitalIn &&
    toMicros(before.capitalOutUsd) === capitalOut
  ) {
    return null;
  }
  return {
    vault: after.vault,
    ts: after.updatedAt,
    blockNumber: after.blockNumber,
    seq: after.records,
    valueUsd: formatFixed(after.valueUsd, 6),
    capitalInUsd: formatFixed(after.capitalInUsd, 6),
    capitalOutUsd: formatFixed(after.capitalOutUsd, 6),
  };
}

export function snapshotRow(s: VaultState, lastRecordId: string, head: LedgerPosition): SnapshotRow {
  const view = toSnapshotView(s);
  return {
    vault: s.vault,
    chainId: s.chainId,
    owner: s.owner,
    strategy: s.strategy,
    status: view.status,
    snapshot: JSON.stringify(view),
    state: JSON.stringify(serializeState(s)),
    lastRecordId,
    recordsApplied: s.records,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    head,
  };
}

export function positionRows(s: VaultState): PositionRow[] {
  const views = toPositionViews(s);
  return views.map((view) => {
    const p = s.positions[view.id];
    if (!p) throw new Error(`invariant: position view ${view.id} has no state`);
    return {
      vault: s.vault,
      positionId: p.id,
      pool: p.pool,
      tickLower: p.tickLower,
      tickUpper: p.tickUpper,
      liquidity: p.liquidity.toString(),
      inRange: view.inRange,
      view: JSON.stringify(view),
    };
  });
}

export { deserializeState, recordId };
