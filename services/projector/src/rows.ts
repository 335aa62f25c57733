import {
  type AmountBasis,
  createVaultState,
  decodeRecordLazily,
  deserializeState,
  encodeRecord,
  evolve,
  formatFixed,
  isFoldError,
  type LazyRecord,
  ledgerAmount,
  ledgerAmounts,
  RECONCILED,
  RECONCILED_LOG_INDEX,
  RECONCILED_TX_INDEX,
  recordId,
  serializeState,
  toPositionViews,
  toSnapshotView,
  type VaultRecord,
  type VaultState,
} from '@vault-yield/domain';
import type { LedgerPosition, LedgerRow, PositionRow, SnapshotRow } from '@vault-yield/store';

/**
 * The rows the vault projection writes, built from the pure fold (packages/domain): ledger rows,
 * record bodies, `balance.reconciled` rows, snapshot and position rows (equity points: the
 * domain's `equityPoint`), plus the fold step and record decoding it feeds them from.
 */

/** The consumer decodes each record's head; the projection decodes the rest as it folds it. */
export type Decoded = LazyRecord;
export const decode = (value: Buffer | null): Decoded => decodeRecordLazily(value);

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

export const positionOf = (r: Pick<VaultRecord, 'blockNumber' | 'txIndex' | 'logIndex'>): LedgerPosition => ({
  blockNumber: r.blockNumber,
  txIndex: r.txIndex,
  logIndex: r.logIndex,
});

/**
 * A sequenced mark has no ledger row (migration 0013): GET events never serve it, its sequence
 * number catches a republished copy, and re-folds read it from the record bundles. Unsequenced
 * marks (schema 2) keep their rows: there the ledger is the duplicate check.
 */
export const offLedger = (r: Pick<VaultRecord, 'type' | 'seq'>): boolean =>
  r.type === 'mark' && r.seq !== undefined;

/**
 * The ledger row of an applied record (its identity, order and what the reader serves). The
 * served `payload` is the parsed payload (canonical: lowercased, unknown keys dropped). The
 * record itself is stored as a body in a bundle (`bodyOf`).
 */
export function ledgerRow(r: VaultRecord, s?: AmountBasis): LedgerRow {
  const row: LedgerRow = {
    vault: r.vault,
    chainId: r.chainId,
    blockHash: r.blockHash,
    txHash: r.txHash,
    logIndex: r.logIndex,
    blockNumber: r.blockNumber,
    txIndex: r.txIndex,
    ts: r.blockTimestamp * 1000,
    type: r.type,
    payload: JSON.stringify(r.payload),
  };
  // Its token amounts with symbols and USD at the block, read with the fold's state after it.
  if (s) row.amounts = JSON.stringify(ledgerAmounts(r, s));
  return row;
}

/**
 * The bytes kept for re-folds of an applied record: as read from the log (either encoding: a
 * re-fold decodes them as the projector did and gets the same record), or its JSON encoding
 * when it has none.
 */
export function bodyOf(r: VaultRecord, raw: Uint8Array | null | undefined): Uint8Array {
  return raw && raw.byteLength > 0 ? raw : encodeRecord(r);
}

/** Where a block's `balance.reconciled` rows stand: the block and transaction of a record of it. */
export type ReconciledAt = Pick<
  LedgerRow,
  'vault' | 'chainId' | 'blockHash' | 'txHash' | 'blockNumber' | 'ts'
>;

export const reconciledAt = (r: VaultRecord): ReconciledAt => ({
  vault: r.vault,
  chainId: r.chainId,
  blockHash: r.blockHash,
  txHash: r.txHash,
  blockNumber: r.blockNumber,
  ts: r.blockTimestamp * 1000,
});

/**
 * The `balance.reconciled` rows of a block end: one per token whose holdings differed from what
 * the events explain (see evolve.ts `reconcile`). Same block and tx hash as the record that ended
 * the block (`at`), placed after every transaction of the block (a re-fold skips them and derives
 * them again).
 */
export function reconciledRows(at: ReconciledAt, s: VaultState): LedgerRow[] {
  return s.reconciled.map((x, i) => {
    const payload = JSON.stringify({
      token: x.token,
      amount: x.amount.toString(),
      // null: the token had no valid price yet (the flow waits for its first one, VaultState.unpriced)
      valueUsd: x.valueUsd === null ? null : formatFixed(x.valueUsd),
      // A shortfall no event explains is a loss (never capital out: evolve.ts `loss`).
      bookedAs: x.amount > 0n ? 'capitalIn' : 'loss',
    });
    const amount = ledgerAmount(s, 'amount', x.token, x.amount);
    return {
      amounts: JSON.stringify(amount ? [amount] : []),
      ...at,
      logIndex: RECONCILED_LOG_INDEX - i,
      txIndex: RECONCILED_TX_INDEX,
      type: RECONCILED,
      // Not a record of the log (no body): re-folds skip this type and derive it again.
      payload,
    };
  });
}

/**
 * The `balance.reconciled` rows of a state that are losses: outflows no event explains (the
 * projector counts them, `projector_unexplained_outflows_total`).
 */
export function unexplainedOutflows(s: VaultState): number {
  let n = 0;
  for (const x of s.reconciled) if (x.amount < 0n) n++;
  return n;
}

export function snapshotRow(
  s: VaultState,
  lastRecordId: string,
  head: LedgerPosition,
  seq: { lastSeq: number | null; held: boolean } = { lastSeq: null, held: false },
): SnapshotRow {
  const view = toSnapshotView(s);
  return {
    vault: s.vault,
    chainId: s.chainId,
    owner: s.owner,
    strategy: view.strategy,
    status: view.status,
    snapshot: JSON.stringify(view),
    state: JSON.stringify(serializeState(s)),
    lastRecordId,
    recordsApplied: s.records,
    createdAt: s.createdAt,
    // The time of the figures shown (a block end), not of the open block's last record: the
    // vaults list labels the snapshot's value with it (#43 item 6).
    updatedAt: view.updatedAt,
    head,
    lastSeq: seq.lastSeq,
    held: seq.held,
  };
}

export function positionRows(s: VaultState): PositionRow[] {
  const views = toPositionViews(s);
  return views.map((view) => {
    const p = s.positions[view.id];
    if (!p) throw new Error(`invariant: position view ${view.id} has no state`);
    return {
      chainId: s.chainId,
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
