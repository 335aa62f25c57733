import type { Logger } from '@vault-yield/common';
import {
  checkSeq,
  closeBlock,
  type DecodeResult,
  decodeRecord,
  equityBasis,
  equityPoint,
  type Micros,
  nextSeqPosition,
  type RecordHead,
  recordIdParts,
  stalePrices,
  type VaultRecord,
  type VaultRecordOf,
  type VaultState,
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
  type RecordKey,
  type SnapshotRow,
} from '@vault-yield/store';
import type { CachedVault, StateCache } from './cache.js';
import {
  bodyOf,
  type Decoded,
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
  unexplainedOutflows,
} from './rows.js';
import {
  type Projection,
  type ProjectionRun,
  type Refusal,
  type RunnerItem,
  vaultOfKey,
} from './runner/index.js';

/**
 * The vault projection: folds each vault's records (packages/domain) into its rows — ledger,
 * equity points, positions, snapshot. One fold loop (`foldInto`) serves live records and the
 * re-folds of a vault from its ledger (after a revert, or a dead-letter retry).
 */

export interface VaultBatchOut {
  applied: number;
  duplicates: number;
  reverts: number;
  vaults: number;
  /** Held records (earlier batches' or this one's) folded once the gap before them was filled. */
  released: number;
  /** Records valued with a price older than its feed's heartbeat, by feed. */
  stale: Map<string, number>;
  /** Outflows no vault event explains found at the batch's block ends (losses, `balance.reconciled`). */
  unexplainedOutflows: number;
  /** The batch's vaults as they stand once this transaction commits (null: no state). */
  states: Map<string, CachedVault | null>;
  /** Milliseconds spent per phase (for debug logs and profiling). */
  ms: { read: number; fold: number; write: number };
}

export interface VaultProjectionOptions {
  log: Logger;
  /** Fold states of earlier batches (validated against the stored offset and epoch). */
  cache?: StateCache;
  /** COPY the ledger rows (see ApplyOptions.copyLedger in apply.ts). */
  copyLedger?: boolean;
}

export const NO_HEAD: LedgerPosition = { blockNumber: -1, txIndex: -1, logIndex: -1 };

/** One vault's fold within a transaction. */
export interface VaultWork {
  vault: string;
  state: VaultState | null;
  lastRecordId: string;
  head: LedgerPosition;
  /** Ledger rows above this head cannot be duplicates; at or below it, `existing` decides. */
  storedHead: LedgerPosition;
  /**
   * Unnumbered records (schema 2) applied in this transaction (or, after a re-fold, the vault's
   * whole ledger's): a numbered record's copy is caught by its number, so it is not kept here.
   */
  seen: Set<string>;
  changed: boolean;
  /** Micros of the vault's last block end (`equityBasis`): what its next equity point is compared with. */
  micros: Micros | null;
  /** Last sequence number folded (null: none, or only unsequenced records). */
  lastSeq: number | null;
  /** Records of the vault are held behind a gap (dead letters of kind `gap`). */
  held: boolean;
}

/**
 * Where the fold loop puts its rows: ledger rows as objects (for `insertLedger`) or straight into
 * COPY bytes (`copyLedger`), equity points always as COPY bytes — a batch's rows wait for their
 * statement off the JS heap.
 */
export interface RowSink {
  ledger: LedgerRow[] | CopyBuffer<LedgerRow>;
  equity: CopyBuffer<EquityRow>;
  /** Live records' bodies per vault, in log order (one bundle row each per flush). */
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

/** A held record, decoded whole again, as the runner hands a record over. */
const heldItem = (
  m: Pick<Refusal, 'offset' | 'key' | 'value'>,
  d: Extract<DecodeResult, { ok: true }>,
): RunnerItem<Decoded> => ({
  offset: m.offset,
  key: m.key,
  value: m.value,
  decoded: { ok: true, head: d.record, record: () => d },
});

const keyOf = (r: RecordHead): RecordKey => ({
  vault: r.vault,
  chainId: r.chainId,
  blockHash: r.blockHash,
  txHash: r.txHash,
  logIndex: r.logIndex,
});

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
): { kind: Refusal['kind']; reason: string; crashed: boolean } | null {
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
    let bodies = sink.bodies.get(r.vault);
    if (!bodies) {
      bodies = [];
      sink.bodies.set(r.vault, bodies);
    }
    bodies.push(bodyOf(r, live.raw));
  }
  if (step.state.reconciled.length > 0)
    for (const row of reconciledRows(reconciledAt(r), step.state)) addLedger(sink, row);
  // A numbered record's copy is caught by its number (checkSeq); only unnumbered ones need the set.
  if (r.seq === undefined) w.seen.add(id);
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
 * again with exactly the records that remain. Returns the records folded and the marks dropped.
 */
export async function refoldVault(
  tx: ProjectionTx,
  w: VaultWork,
  onRefused: (reason: string) => void,
  log: Logger,
  orphaned?: Orphaned,
  /** Told of each record folded and the state after it (a dead-letter retry reads its rows' amounts so). */
  onFolded?: (r: VaultRecord, s: VaultState) => void,
): Promise<{ remaining: number; droppedMarks: number }> {
  const stored = await tx.vaultRecords<VaultRecord>(w.vault, {
    decode: (body) => {
      const d = decodeRecord(body);
      if (d.ok) return d.record;
      log.error(
        { vault: w.vault, reason: d.reason },
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
  await tx.clearVault(w.vault, { snapshot: true });
  await tx.deleteReconciled(w.vault);
  Object.assign(w, { state: null, micros: null, head: NO_HEAD, lastRecordId: '', seen: new Set<string>() });
  const sink = emptySink();
  for (const { record } of kept) {
    const refused = foldInto(w, record, sink, null);
    if (refused) onRefused(refused.reason);
    else if (onFolded && w.state) onFolded(record, w.state);
  }
  await tx.insertLedger(sink.ledger as LedgerRow[]);
  await tx.insertEquity(sink.equity);
  // The bundles then hold what survived the revert, and no reverted mark can count again.
  if (orphaned)
    await tx.rewriteBundles(
      w.vault,
      kept.map((s) => s.body),
    );
  // The remaining ledger is now fully known in memory: no database lookups for this vault.
  w.storedHead = NO_HEAD;
  w.changed = true;
  return { remaining: kept.length, droppedMarks: stored.length - kept.length };
}

/** Loads the vaults' states: from the cache when it holds them, else from their snapshot rows. */
async function loadWork(
  tx: ProjectionTx,
  vaults: Iterable<string>,
  partition: number,
  cache?: StateCache,
): Promise<Map<string, VaultWork>> {
  const work = new Map<string, VaultWork>();
  const missing: string[] = [];
  const fresh = (
    vault: string,
    state: VaultState | null,
    lastRecordId: string,
    head: LedgerPosition,
    micros: Micros | null,
    seq: { lastSeq: number | null; held: boolean },
  ): VaultWork => ({
    vault,
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

/** Writes the snapshot and positions of every changed vault; returns the vaults' cache entries. */
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
      w.vault,
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
    touched.push(w.vault);
    snapshots.push(snapshotRow(w.state, w.lastRecordId, w.head, w));
    positions.push(...positionRows(w.state));
  }
  await tx.upsertSnapshots(snapshots);
  await tx.replacePositions(touched, positions);
  return { touched, states };
}

export function createVaultProjection(opts: VaultProjectionOptions): Projection<Decoded, VaultBatchOut> {
  const { log, cache } = opts;
  return {
    locked(partition, offset, epoch) {
      cache?.validate(partition, `${offset}@${epoch}`);
    },
    async apply(tx, items, partition): Promise<ProjectionRun<VaultBatchOut>> {
      const out: VaultBatchOut = {
        applied: 0,
        duplicates: 0,
        reverts: 0,
        vaults: 0,
        released: 0,
        stale: new Map(),
        unexplainedOutflows: 0,
        states: new Map(),
        ms: { read: 0, fold: 0, write: 0 },
      };
      let t = performance.now();
      const lap = (phase: keyof VaultBatchOut['ms']) => {
        const now = performance.now();
        out.ms[phase] += now - t;
        t = now;
      };
      const byVault = new Map<string, RunnerItem<Decoded>[]>();
      for (const item of items) {
        let list = byVault.get(item.decoded.head.vault);
        if (!list) {
          list = [];
          byVault.set(item.decoded.head.vault, list);
        }
        list.push(item);
      }
      const work = await loadWork(tx, byVault.keys(), partition, cache);
      const suspects: RecordKey[] = [];
      for (const [vault, list] of byVault) {
        const w = work.get(vault) as VaultWork;
        for (const { decoded } of list) {
          const { head } = decoded;
          if (head.type !== 'revert' && comparePosition(positionOf(head), w.storedHead) <= 0) {
            suspects.push(keyOf(head));
          }
        }
      }
      const existing = new Set(
        (await tx.existingRecords(suspects)).map((k) => recordId(k as Parameters<typeof recordId>[0])),
      );
      lap('read');

      const refused: Refusal[] = [];
      let sink = emptySink(opts.copyLedger);
      const flush = async () => {
        lap('fold');
        if (Array.isArray(sink.ledger)) await tx.insertLedger(sink.ledger);
        else await tx.copyLedger(sink.ledger);
        await tx.copyBundles(sink.bodies);
        await tx.insertEquity(sink.equity);
        sink = emptySink(opts.copyLedger);
        lap('write');
      };
      /**
       * One record of a vault, live or released from the hold: true when it was held (a gap), a
       * revert record to apply (`applyRevert`, which writes and reads), else false. Synchronous:
       * no promise a record (the usual record needs no I/O).
       */
      const step = (w: VaultWork, item: RunnerItem<Decoded>): boolean | VaultRecordOf<'revert'> => {
        // The whole record, decoded now: it dies young, with the fold's own garbage.
        const whole = item.decoded.record();
        if (!whole.ok) {
          refused.push({
            offset: item.offset,
            key: item.key,
            value: item.value,
            vault: vaultOfKey(item.key),
            kind: 'decode',
            reason: whole.reason,
          });
          return false;
        }
        const r = whole.record;
        const verdict = checkSeq({ lastSeq: w.lastSeq, hasState: w.state !== null }, r);
        if (verdict === 'duplicate') {
          out.duplicates++;
          return false;
        }
        if (verdict === 'gap') {
          // Never fold past a lost record: hold this one (and, by the same check, every later one).
          if (!w.held)
            log.error(
              { vault: w.vault, offset: item.offset, lastSeq: w.lastSeq, seq: r.seq },
              'gap in the vault stream: vault held until the missing records arrive (vault-yield republish)',
            );
          const reason = `gap: seq ${r.seq} after ${w.lastSeq ?? 'none'}; missing ${(w.lastSeq ?? 0) + 1}..${(r.seq ?? 0) - 1}`;
          const seq = r.seq ?? null;
          refused.push({
            offset: item.offset,
            key: item.key,
            value: item.value,
            vault: w.vault,
            kind: 'gap',
            reason,
            seq,
            blockNumber: r.blockNumber,
          });
          w.held = true;
          w.changed = true;
          return true;
        }
        if (r.type === 'revert') return r;
        const after = nextSeqPosition({ lastSeq: w.lastSeq, hasState: w.state !== null }, r);
        const id = recordId(r);
        if (
          (r.seq === undefined && w.seen.has(id)) ||
          (comparePosition(positionOf(r), w.storedHead) <= 0 && existing.has(id))
        ) {
          out.duplicates++;
          return false;
        }
        // A refused record is in dead letters, not lost: its number counts as reached.
        w.lastSeq = after;
        // A block whose last record was lost ends here (foldInto writes its rows): its losses count too.
        const ending = w.state?.blockStart && r.blockNumber > w.state.blockNumber ? w.state : null;
        const no = foldInto(w, r, sink, { raw: item.value }, id);
        if (no) {
          // Its number is reached: the snapshot row (which keeps last_seq) must be written even
          // when nothing else of the vault is in the batch, or the next batch reloads the number
          // before it and holds every later record behind a gap that is not there.
          w.changed = w.changed || w.state !== null;
          // Loud: a dead letter leaves the vault behind until it is retried.
          log.error(
            { vault: w.vault, offset: item.offset, kind: no.kind, reason: no.reason },
            no.crashed
              ? 'fold threw a non-FoldError: record dead-lettered'
              : 'record breaks the log rules: dead-lettered',
          );
          refused.push({
            offset: item.offset,
            key: item.key,
            value: item.value,
            vault: w.vault,
            kind: no.kind,
            reason: no.reason,
            seq: r.seq ?? null,
            blockNumber: r.blockNumber,
          });
          return false;
        }
        out.applied++;
        for (const p of stalePrices(w.state!)) out.stale.set(p.feed, (out.stale.get(p.feed) ?? 0) + 1);
        out.unexplainedOutflows += unexplainedOutflows(w.state!);
        if (ending) out.unexplainedOutflows += unexplainedOutflows(closeBlock(ending));
        return false;
      };

      /** A revert `step` gave back: what it wrote so far is written, then the vault is re-folded. */
      const applyRevert = async (w: VaultWork, r: VaultRecordOf<'revert'>): Promise<void> => {
        const after = nextSeqPosition({ lastSeq: w.lastSeq, hasState: w.state !== null }, r);
        await flush();
        if (await revert(tx, w, r, log)) out.reverts++;
        // A vault created in the orphaned blocks is gone: if the canonical chain creates it
        // again, the indexer numbers it from 1 (its registry entry went with the rewind).
        w.lastSeq = w.state === null ? null : after;
        w.changed = w.changed || w.state !== null;
        // Records of the orphaned blocks held behind a gap are void with them (stored letters and
        // this batch's alike): kept, they would hold the vault for ever — for a vault born there,
        // one with no state left, no number could ever reach them.
        const voided = voidedBy(r.payload);
        const isVoid = (value: Buffer | null) => {
          if (!value) return false;
          const d = decodeRecord(value);
          return d.ok && d.record.type !== 'revert' && voided(d.record);
        };
        const letters = await tx.lockHeld([w.vault]);
        const gone = letters.filter((l) => isVoid(l.value)).map((l) => l.id);
        await tx.deleteDeadLetters(gone);
        let dropped = gone.length;
        for (let i = refused.length - 1; i >= 0; i--) {
          const f = refused[i]!;
          if (f.kind === 'gap' && f.vault === w.vault && isVoid(f.value)) {
            refused.splice(i, 1);
            dropped++;
          }
        }
        if (dropped > 0) {
          w.held =
            letters.length > gone.length || refused.some((f) => f.kind === 'gap' && f.vault === w.vault);
          w.changed = w.changed || w.state !== null;
          log.info(
            { vault: w.vault, dropped, held: w.held },
            'revert: held records of the orphaned blocks dropped',
          );
        }
      };

      /** Folds the vault's held records that now follow its last number; the rest stay held. */
      const release = async (w: VaultWork, stored: boolean, heldHere: Refusal[]): Promise<number> => {
        const letters = stored ? await tx.lockHeld([w.vault]) : [];
        const pending: {
          seq: number;
          item: RunnerItem<Decoded>;
          record: VaultRecord;
          id?: number;
          here?: Refusal;
        }[] = [];
        for (const l of letters) {
          const d = decodeRecord(l.value);
          if (d.ok && d.record.seq !== undefined)
            pending.push({
              seq: d.record.seq,
              id: l.id,
              item: heldItem(l, d),
              record: d.record,
            });
        }
        for (const h of heldHere) {
          const d = decodeRecord(h.value);
          if (d.ok && d.record.seq !== undefined)
            pending.push({
              seq: d.record.seq,
              here: h,
              item: heldItem(h, d),
              record: d.record,
            });
        }
        pending.sort((a, b) => a.seq - b.seq);
        const done: number[] = [];
        const gone = new Set<Refusal>();
        let released = 0;
        for (const p of pending) {
          const verdict = checkSeq({ lastSeq: w.lastSeq, hasState: w.state !== null }, p.record);
          if (verdict === 'gap') break;
          if (p.id !== undefined) done.push(p.id);
          if (p.here) gone.add(p.here);
          if (verdict === 'apply') {
            const revertRecord = step(w, p.item);
            if (typeof revertRecord === 'object') await applyRevert(w, revertRecord);
            released++;
          } else out.duplicates++;
        }
        await tx.deleteDeadLetters(done);
        for (let i = refused.length - 1; i >= 0; i--) if (gone.has(refused[i]!)) refused.splice(i, 1);
        w.held = pending.some(
          (p) => !(p.id !== undefined && done.includes(p.id)) && !(p.here && gone.has(p.here)),
        );
        w.changed = w.changed || w.state !== null;
        if (released > 0)
          log.info(
            { vault: w.vault, released, lastSeq: w.lastSeq, held: w.held },
            'gap filled: held records folded',
          );
        return released;
      };

      for (const [vault, list] of byVault) {
        const w = work.get(vault) as VaultWork;
        const wasHeld = w.held;
        const before = w.lastSeq;
        // A vault never folded has no snapshot to say `held`: its letters are looked for.
        const unknown = w.state === null && w.lastSeq === null;
        const heldHere: Refusal[] = [];
        for (const item of list) {
          const n = refused.length;
          const held = step(w, item);
          if (held === true) heldHere.push(refused[n]!);
          else if (held !== false) {
            await applyRevert(w, held);
            // What the revert voided is no longer held.
            for (let i = heldHere.length - 1; i >= 0; i--)
              if (!refused.includes(heldHere[i]!)) heldHere.splice(i, 1);
          }
        }
        // The gap may be filled now (a republished record): fold what was held, in order.
        if ((wasHeld || unknown || heldHere.length > 0) && w.lastSeq !== before)
          out.released += await release(w, wasHeld || unknown, heldHere);
      }

      await flush();
      lap('fold');
      const { touched, states } = await writeVaults(tx, work.values(), partition);
      out.vaults = touched.length;
      out.states = states;
      lap('write');
      return {
        refused,
        out,
        async finish(tx2, letters) {
          const flagged = new Set(touched);
          for (const l of letters) if (l.vault) flagged.add(l.vault);
          await tx2.markBehind([...flagged]);
          lap('write');
        },
      };
    },
  };
}

/**
 * Revert: delete the vault's ledger rows from the orphaned blocks, then re-fold the vault from the
 * records that remain (its orphaned marks, which have no rows, left out). A revert that orphans
 * nothing (a duplicate, or blocks the vault never touched) changes nothing. Returns whether
 * anything was removed.
 */
async function revert(
  tx: ProjectionTx,
  w: VaultWork,
  r: VaultRecordOf<'revert'>,
  log: Logger,
): Promise<boolean> {
  const { fromBlock, orphanedBlockHashes } = r.payload;
  const removed = await tx.deleteOrphaned(w.vault, fromBlock, orphanedBlockHashes);
  // Marks have no ledger rows: a vault whose fold reached the window may have some to drop.
  if (removed === 0 && w.head.blockNumber < fromBlock) return false;
  const { remaining, droppedMarks } = await refoldVault(
    tx,
    w,
    (reason) => log.warn({ vault: w.vault, reason }, 'ledger row refused in re-fold; skipped'),
    log,
    { fromBlock, blockHashes: new Set(orphanedBlockHashes) },
  );
  if (removed + droppedMarks === 0) return false;
  log.info({ vault: w.vault, removed: removed + droppedMarks, remaining }, 'reverted and re-folded vault');
  return true;
}
