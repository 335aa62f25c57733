import type { Logger } from '@vault-yield/common';
import {
  closeBlock,
  decodeRecord,
  equityBasis,
  equityPoint,
  type Micros,
  recordIdParts,
  type VaultId,
  type VaultRecord,
  type VaultState,
  vaultIdOf,
  voidedBy,
} from '@vault-yield/domain';
import {
  type CopyBuffer,
  comparePosition,
  type EquityRow,
  equityCopyBuffer,
  type LedgerPosition,
  type LedgerRow,
  ledgerCopyBuffer,
  type PositionRow,
  type ProjectionTx,
  type SnapshotRow,
} from '@vault-yield/store';
import type { CachedVault, StateCache } from './cache.js';
import {
  bodyOf,
  deserializeState,
  foldStep,
  ledgerRow,
  offLedger,
  positionOf,
  positionRows,
  reconciledAt,
  reconciledRows,
  recordId,
  snapshotRow,
} from './rows.js';
import { type ApplyRefusal, NO_HEAD, type StreamState } from './runner/index.js';

/**
 * The vault projection's fold loop (`foldInto`), one for live records and the re-folds of a vault
 * from its ledger (after a revert, or a dead-letter retry), and the vaults' work within a
 * transaction: loaded from the state cache or the snapshots, written back as snapshot and positions.
 */

export { NO_HEAD };

/**
 * One vault's fold within a transaction, beside the runner's bookkeeping of its stream
 * (`StreamState`: last number, hold, duplicate checks), which its snapshot row stores.
 */
export interface VaultWork extends StreamState {
  /** The vault's id (`eip155:{chainId}:{address}`): its stream's key, and its rows' (chain_id, vault). */
  id: VaultId;
  state: VaultState | null;
  lastRecordId: string;
  head: LedgerPosition;
  /** Micros of the vault's last block end (`equityBasis`): what its next equity point is compared with. */
  micros: Micros | null;
}

/**
 * Where the fold loop puts its rows: ledger rows as objects (for `insertLedger`) or straight into
 * COPY bytes (`copyLedger`), equity points always as COPY bytes — a batch's rows wait for their
 * statement off the JS heap.
 */
export interface RowSink {
  ledger: LedgerRow[] | CopyBuffer<LedgerRow>;
  equity: CopyBuffer<EquityRow>;
  /** Live records' bodies per vault (by vault id), in log order (one bundle row each per flush). */
  bodies: Map<string, Uint8Array[]>;
}

export const emptySink = (copyLedger = false): RowSink => ({
  ledger: copyLedger ? ledgerCopyBuffer() : [],
  equity: equityCopyBuffer(),
  bodies: new Map(),
});

const addLedger = (sink: RowSink, row: LedgerRow): void => {
  if (Array.isArray(sink.ledger)) sink.ledger.push(row);
  else sink.ledger.add(row);
};

/**
 * The fold loop's step, shared by live records and re-folds: folds `r` into `w`, pushing its
 * equity point and `balance.reconciled` rows, and (live only: a re-fold's records are in the
 * ledger already) its ledger row. Returns the refusal, if any; `w` is unchanged then.
 */
export function foldInto(
  w: VaultWork,
  r: VaultRecord,
  sink: RowSink,
  live: { raw: Buffer | null } | null,
  id = recordId(r),
): ApplyRefusal | null {
  const step = foldStep(w.state, r);
  if (!step.ok)
    return { kind: step.crashed ? 'fold' : 'envelope', reason: step.reason, crashed: step.crashed };
  // The fold ended a block whose last record never reached it (dead-lettered): that block end's
  // point and reconciliations are written as any block end's.
  if (w.state?.blockStart && r.blockNumber > w.state.blockNumber) endedBlock(w, w.state, sink);
  // Only block ends are instants of the series (see equityPoint); w.micros is the last one's.
  if (r.lastInBlock) {
    const point = equityPoint(w.state ? w.micros : null, step.state);
    if (point.row) sink.equity.add(point.row);
    w.micros = point.micros;
  }
  if (live) {
    if (!offLedger(r)) addLedger(sink, ledgerRow(r, step.state));
    const key = vaultIdOf(r);
    let bodies = sink.bodies.get(key);
    if (!bodies) {
      bodies = [];
      sink.bodies.set(key, bodies);
    }
    bodies.push(bodyOf(r, live.raw));
  }
  if (step.state.reconciled.length > 0)
    for (const row of reconciledRows(reconciledAt(r), step.state)) addLedger(sink, row);
  const pos = positionOf(r);
  if (comparePosition(pos, w.head) > 0) w.head = pos;
  w.lastRecordId = id;
  w.state = step.state;
  w.changed = true;
  return null;
}

/**
 * The rows of an open block that a record of a later block ended (`closeBlock`, as the fold did):
 * its equity point, and its `balance.reconciled` rows placed in the block and transaction of the
 * last record folded in it (the one whose successor was lost).
 */
function endedBlock(w: VaultWork, open: VaultState, sink: RowSink): void {
  const closed = closeBlock(open);
  const point = equityPoint(w.micros, closed);
  if (point.row) sink.equity.add(point.row);
  w.micros = point.micros;
  const last = recordIdParts(w.lastRecordId);
  if (closed.reconciled.length === 0 || !last) return;
  const at = { ...last, blockNumber: closed.blockNumber, ts: closed.updatedAt };
  for (const row of reconciledRows(at, closed)) addLedger(sink, row);
}

/** What a revert orphans: the vault's records at `fromBlock` or later in these blocks. */
export interface Orphaned {
  fromBlock: number;
  blockHashes: ReadonlySet<string>;
}

/**
 * Re-folds a vault from its stored records (fold order; see ProjectionTx.vaultRecords) through
 * `foldInto`: clears its derived rows and its `balance.reconciled` rows (derived again), and
 * leaves `w` holding the result. A stored record the fold refuses is skipped when `onRefused`
 * returns, or aborts the re-fold when it throws. After a revert (`orphaned`), the marks of the
 * orphaned blocks (no ledger rows to delete) are left out, and the vault's bundles are written
 * again with exactly the records that remain. Returns how many records remain, the marks dropped
 * and the records folded (those the fold took).
 */
export async function refoldVault(
  tx: ProjectionTx,
  w: VaultWork,
  onRefused: (reason: string) => void,
  log: Logger,
  orphaned?: Orphaned,
  /** Told of each record folded and the state after it (a dead-letter retry reads its rows' amounts so). */
  onFolded?: (r: VaultRecord, s: VaultState) => void,
): Promise<{ remaining: number; droppedMarks: number; folded: VaultRecord[] }> {
  const stored = await tx.vaultRecords<VaultRecord>(w.id, {
    decode: (body) => {
      const d = decodeRecord(body);
      if (d.ok) return d.record;
      log.error(
        { vault: w.id, reason: d.reason },
        'record body no longer decodes: its ledger row has no body, the re-fold stops',
      );
      return undefined;
    },
    offLedger,
  });
  const voided = orphaned
    ? voidedBy({ fromBlock: orphaned.fromBlock, orphanedBlockHashes: [...orphaned.blockHashes] })
    : null;
  const kept = voided ? stored.filter(({ record: r }) => !voided(r)) : stored;
  await tx.clearVault(w.id, { snapshot: true });
  await tx.deleteReconciled(w.id);
  Object.assign(w, { state: null, micros: null, head: NO_HEAD, lastRecordId: '' });
  const sink = emptySink();
  const folded: VaultRecord[] = [];
  for (const { record } of kept) {
    const refused = foldInto(w, record, sink, null);
    if (refused) onRefused(refused.reason);
    else {
      folded.push(record);
      if (onFolded && w.state) onFolded(record, w.state);
    }
  }
  await tx.insertLedger(sink.ledger as LedgerRow[]);
  await tx.insertEquity(sink.equity);
  // The bundles then hold what survived the revert, and no reverted mark can count again.
  if (orphaned)
    await tx.rewriteBundles(
      w.id,
      kept.map((s) => s.body),
    );
  w.changed = true;
  return { remaining: kept.length, droppedMarks: stored.length - kept.length, folded };
}

/**
 * Loads the vaults' states (by vault id): from the cache when it holds them, else from their
 * snapshot rows. A vault is (chain, address): the same address on two chains is two vaults.
 */
export async function loadWork(
  tx: ProjectionTx,
  vaults: readonly VaultId[],
  partition: number,
  cache?: StateCache,
): Promise<Map<VaultId, VaultWork>> {
  const work = new Map<VaultId, VaultWork>();
  const missing: VaultId[] = [];
  const fresh = (
    id: VaultId,
    state: VaultState | null,
    lastRecordId: string,
    head: LedgerPosition,
    micros: Micros | null,
    seq: { lastSeq: number | null; held: boolean },
  ): VaultWork => ({
    id,
    state,
    lastRecordId,
    head,
    storedHead: head,
    seen: new Set(),
    changed: false,
    micros,
    lastSeq: seq.lastSeq,
    held: seq.held,
  });
  for (const vault of vaults) {
    const c = cache?.get(partition, vault);
    if (c) work.set(vault, fresh(vault, c.state, c.lastRecordId, c.head, c.micros, c));
    else missing.push(vault);
  }
  const stored = await tx.loadVaults(missing);
  for (const vault of missing) {
    const s = stored.get(vault);
    const state = s ? deserializeState(s.state) : null;
    work.set(
      vault,
      fresh(vault, state, s?.lastRecordId ?? '', s?.head ?? NO_HEAD, state ? equityBasis(state) : null, {
        lastSeq: s?.lastSeq ?? null,
        held: s?.held ?? false,
      }),
    );
  }
  return work;
}

/** Writes the snapshot and positions of every changed vault; returns them (vault ids) and their cache entries. */
export async function writeVaults(
  tx: ProjectionTx,
  work: Iterable<VaultWork>,
  partition: number,
): Promise<{ touched: string[]; states: Map<string, CachedVault | null> }> {
  const snapshots: SnapshotRow[] = [];
  const positions: PositionRow[] = [];
  const touched: string[] = [];
  const states = new Map<string, CachedVault | null>();
  for (const w of work) {
    states.set(
      w.id,
      w.state
        ? {
            partition,
            state: w.state,
            lastRecordId: w.lastRecordId,
            head: w.head,
            micros: w.micros,
            lastSeq: w.lastSeq,
            held: w.held,
          }
        : null,
    );
    if (!w.changed || !w.state) continue;
    touched.push(w.id);
    snapshots.push(snapshotRow(w.state, w.lastRecordId, w.head, w));
    positions.push(...positionRows(w.state));
  }
  await tx.upsertSnapshots(snapshots);
  await tx.replacePositions(touched, positions);
  return { touched, states };
}
