import {
  createVaultState,
  decodeRecordLazily,
  deserializeState,
  encodeRecord,
  evolve,
  formatFixed,
  isFoldError,
  type LazyRecord,
  RECONCILED,
  RECONCILED_LOG_INDEX,
  RECONCILED_TX_INDEX,
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
    payload: JSON.stringify(r.payload),
  };
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
      valueUsd: formatFixed(x.valueUsd),
      bookedAs: x.amount > 0n ? 'capitalIn' : 'capitalOut',
    });
    return {
      ...at,
      logIndex: RECONCILED_LOG_INDEX - i,
      txIndex: RECONCILED_TX_INDEX,
      type: RECONCILED,
      // Not a record of the log (no body): re-folds skip this type and derive it again.
      payload,
    };
  });
}

/** A state's value and flows rounded to the JSON edge's precision (6 dp), in micro-USD. */
export interface Micros {
  value: bigint;
  capitalIn: bigint;
  capitalOut: bigint;
  /** The strategy in force (a switch always makes a point: returns count for the strategy then). */
  strategy: string;
  /** The exact flows these round: the next state's are rounded again only when they moved. */
  exact: { capitalIn: bigint; capitalOut: bigint };
}

/** `s`'s micros; the flows' are taken from `prev` when its exact flows are `s`'s (most records move none). */
export function microsOf(s: VaultState, prev: Micros | null = null): Micros {
  const sameIn = prev !== null && prev.exact.capitalIn === s.capitalInUsd;
  const sameOut = prev !== null && prev.exact.capitalOut === s.capitalOutUsd;
  return {
    value: toMicros(s.valueUsd),
    capitalIn: sameIn ? prev.capitalIn : toMicros(s.capitalInUsd),
    capitalOut: sameOut ? prev.capitalOut : toMicros(s.capitalOutUsd),
    strategy: s.strategy,
    exact: sameIn && sameOut ? prev.exact : { capitalIn: s.capitalInUsd, capitalOut: s.capitalOutUsd },
  };
}

const MICRO = 1_000_000n;
/** `formatFixed(x, 6)` given `toMicros(x)`: the same text without rounding twice. */
export function formatMicros(m: bigint): string {
  const abs = m < 0n ? -m : m;
  const frac = (abs % MICRO).toString().padStart(6, '0').replace(/0+$/, '');
  const body = frac ? `${abs / MICRO}.${frac}` : `${abs / MICRO}`;
  return m < 0n ? `-${body}` : body;
}

/**
 * Equity points: one per block end (a vault's `lastInBlock` record) that changed value or flows at
 * the JSON edge's precision (6 dp) or the strategy, plus the vault's first. Records before the
 * last of their block make none: they are valued at the block's end with only part of its flows,
 * so they are no instant a chart may show (net of flows would swing inside one block). Each point
 * carries the strategy then in force and the fold's exact return index (realised returns never
 * use the rounded figures). Decided by comparing with the previous block end (`before`: its
 * micros, `equityBasis`; null for a new vault), so the series is the same whatever the batch
 * boundaries (and after a re-fold). Returns the point (or null) and `after`'s micros.
 */
export function equityPoint(
  before: Micros | null,
  after: VaultState,
): { row: EquityRow | null; micros: Micros } {
  const micros = microsOf(after, before);
  if (
    before &&
    before.value === micros.value &&
    before.capitalIn === micros.capitalIn &&
    before.capitalOut === micros.capitalOut &&
    before.strategy === micros.strategy
  ) {
    return { row: null, micros };
  }
  return {
    row: {
      vault: after.vault,
      ts: after.updatedAt,
      blockNumber: after.blockNumber,
      seq: after.records,
      valueUsd: formatMicros(micros.value),
      capitalInUsd: formatMicros(micros.capitalIn),
      capitalOutUsd: formatMicros(micros.capitalOut),
      strategy: after.strategy,
      returnIndex: formatFixed(after.returnIndex, 18),
    },
    micros,
  };
}

/**
 * What a vault's next equity point is compared with, from its state alone (a state loaded from
 * its snapshot): the micros of its last block end — the state itself at a block end, the
 * previous block end (`blockStart.end`) inside a block; null when the vault has had no block end yet.
 */
export function equityBasis(s: VaultState): Micros | null {
  const b = s.blockStart;
  if (!b) return microsOf(s);
  return b.end ? microsOf(b.end) : null;
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
    updatedAt: s.updatedAt,
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
