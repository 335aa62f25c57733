import type { Logger } from '@vault-yield/common';
import { type VaultRecord, type VaultRecordOf, type VaultState, vaultRecord } from '@vault-yield/domain';
import type { LogBatch } from '@vault-yield/log';
import {
  comparePosition,
  type DeadLetterRow,
  type EquityRow,
  type LedgerPosition,
  type LedgerRow,
  type PositionRow,
  type ProjectionTx,
  type RecordKey,
  type SnapshotRow,
} from '@vault-yield/store';
import type { CachedVault, StateCache } from './cache.js';
import {
  type Decoded,
  deserializeState,
  equityPoint,
  foldStep,
  ledgerRow,
  type Micros,
  microsOf,
  positionOf,
  positionRows,
  recordId,
  snapshotRow,
} from './fold.js';

export interface BatchStats {
  applied: number;
  duplicates: number;
  /** Messages below the stored offset (already applied by this projection). */
  skipped: number;
  deadLetters: { decode: number; fold: number };
  reverts: number;
  vaults: number;
  /** Milliseconds spent per phase (for debug logs and profiling). */
  ms: { read: number; fold: number; write: number };
}

export type ApplyResult =
  | {
      kind: 'applied';
      stats: BatchStats;
      /** The partition's stored offset once this transaction commits. */
      nextOffset: string;
      /** The batch's vaults as they stand once this transaction commits (null: no state). */
      vaults: Map<string, CachedVault | null>;
    }
  | { kind: 'gap'; seekTo: string };

export interface ApplyOptions {
  /** Fold states of earlier batches (validated against the stored offset here). */
  cache?: StateCache;
  /**
   * COPY the ledger rows instead of `insert … on conflict do nothing`. Rows are new by
   * construction (duplicates are filtered first), so this only fails, with a unique violation
   * that aborts the transaction, on a record whose identity is in the ledger at a different
   * position; the caller then re-runs the batch without it.
   */
  copyLedger?: boolean;
}

const NO_HEAD: LedgerPosition = { blockNumber: -1, txIndex: -1, logIndex: -1 };

/** One vault's fold within the batch. */
interface VaultWork {
  vault: string;
  state: VaultState | null;
  lastRecordId: string;
  head: LedgerPosition;
  /** Ledger rows above this head cannot be duplicates; at or below it, `existing` decides. */
  storedHead: LedgerPosition;
  /** Identities applied in this batch (or, after a revert, the vault's whole remaining ledger). */
  seen: Set<string>;
  changed: boolean;
  /** `state`'s micros, computed once per state for the equity decision. */
  micros: Micros | null;
}

const keyOf = (r: VaultRecord): RecordKey => ({
  vault: r.vault,
  chainId: r.chainId,
  blockHash: r.blockHash,
  txHash: r.txHash,
  logIndex: r.logIndex,
});

/**
 * Applies one batch of one partition inside the caller's transaction. Exactly-once rests on three
 * things: (1) the partition's offset row is locked first and only messages at or above the stored
 * offset are applied, the new offset being written in the same transaction; (2) the fold is a pure
 * function of each vault's applied records, so the rows do not depend on batch boundaries;
 * (3) a record whose identity is already in the ledger (a republished duplicate) is not folded
 * again.
 */
export async function applyBatch(
  tx: ProjectionTx,
  batch: LogBatch<Decoded>,
  log: Logger,
  opts: ApplyOptions = {},
): Promise<ApplyResult> {
  const { commit } = batch;
  const { cache } = opts;
  const stored = await tx.lockPartition(commit.groupId, commit.topic, commit.partition);
  const expected = BigInt(stored ?? '0');
  cache?.validate(commit.partition, expected.toString());
  const first = BigInt(batch.messages[0]?.offset ?? '0');
  if (first > expected) return { kind: 'gap', seekTo: expected.toString() };

  const stats: BatchStats = {
    applied: 0,
    duplicates: 0,
    skipped: 0,
    deadLetters: { decode: 0, fold: 0 },
    reverts: 0,
    vaults: 0,
    ms: { read: 0, fold: 0, write: 0 },
  };
  let t = performance.now();
  const lap = (phase: keyof BatchStats['ms']) => {
    const now = performance.now();
    stats.ms[phase] += now - t;
    t = now;
  };
  const deadLetters: DeadLetterRow[] = [];
  const byVault = new Map<
    string,
    { offset: string; key: Buffer | null; value: Buffer | null; record: VaultRecord }[]
  >();
  for (const m of batch.messages) {
    if (BigInt(m.offset) < expected) {
      stats.skipped++;
      continue;
    }
    if (!m.decoded.ok) {
      stats.deadLetters.decode++;
      deadLetters.push({
        topic: commit.topic,
        partition: commit.partition,
        offset: m.offset,
        key: m.key,
        value: m.value,
        reason: m.decoded.reason,
      });
      continue;
    }
    const r = m.decoded.record;
    let list = byVault.get(r.vault);
    if (!list) {
      list = [];
      byVault.set(r.vault, list);
    }
    list.push({ offset: m.offset, key: m.key, value: m.value, record: r });
  }
  if (BigInt(commit.nextOffset) <= expected) {
    return { kind: 'applied', stats, nextOffset: expected.toString(), vaults: new Map() };
  }

  const work = new Map<string, VaultWork>();
  const missing: string[] = [];
  for (const vault of byVault.keys()) {
    const c = cache?.get(commit.partition, vault);
    if (!c) {
      missing.push(vault);
      continue;
    }
    work.set(vault, {
      vault,
      state: c.state,
      lastRecordId: c.lastRecordId,
      head: c.head,
      storedHead: c.head,
      seen: new Set(),
      changed: false,
      micros: c.micros,
    });
  }
  const storedVaults = await tx.loadVaults(missing);
  for (const vault of missing) {
    const s = storedVaults.get(vault);
    const state = s ? deserializeState(s.state) : null;
    work.set(vault, {
      vault,
      state,
      lastRecordId: s?.lastRecordId ?? '',
      head: s?.head ?? NO_HEAD,
      storedHead: s?.head ?? NO_HEAD,
      seen: new Set(),
      changed: false,
      micros: state ? microsOf(state) : null,
    });
  }
  const suspects: RecordKey[] = [];
  for (const [vault, items] of byVault) {
    const w = work.get(vault) as VaultWork;
    for (const { record } of items) {
      if (record.type !== 'revert' && comparePosition(positionOf(record), w.storedHead) <= 0) {
        suspects.push(keyOf(record));
      }
    }
  }
  const existing = new Set(
    (await tx.existingRecords(suspects)).map((k) => recordId(k as Parameters<typeof recordId>[0])),
  );
  lap('read');

  let ledger: LedgerRow[] = [];
  let equity: EquityRow[] = [];
  const flush = async () => {
    lap('fold');
    if (opts.copyLedger) await tx.copyLedger(ledger);
    else await tx.insertLedger(ledger);
    await tx.insertEquity(equity);
    ledger = [];
    equity = [];
    lap('write');
  };

  for (const [vault, items] of byVault) {
    const w = work.get(vault) as VaultWork;
    for (const item of items) {
      const r = item.record;
      if (r.type === 'revert') {
        await flush();
        if (await revert(tx, w, r, log)) stats.reverts++;
        continue;
      }
      const id = recordId(r);
      const pos = positionOf(r);
      if (w.seen.has(id) || (comparePosition(pos, w.storedHead) <= 0 && existing.has(id))) {
        stats.duplicates++;
        continue;
      }
      const step = foldStep(w.state, r);
      if (!step.ok) {
        stats.deadLetters.fold++;
        if (step.crashed)
          log.error({ vault, offset: item.offset, reason: step.reason }, 'fold threw a non-FoldError');
        deadLetters.push({
          topic: commit.topic,
          partition: commit.partition,
          offset: item.offset,
          key: item.key,
          value: item.value,
          reason: step.reason,
        });
        continue;
      }
      const point = equityPoint(w.state ? w.micros : null, step.state);
      if (point.row) equity.push(point.row);
      w.micros = point.micros;
      ledger.push(ledgerRow(r, item.value));
      w.seen.add(id);
      if (comparePosition(pos, w.head) > 0) w.head = pos;
      w.lastRecordId = id;
      w.state = step.state;
      w.changed = true;
      stats.applied++;
    }
  }
  await flush();

  const snapshots: SnapshotRow[] = [];
  const positions: PositionRow[] = [];
  const touched: string[] = [];
  const vaults = new Map<string, CachedVault | null>();
  for (const w of work.values()) {
    vaults.set(
      w.vault,
      w.state && w.micros
        ? {
            partition: commit.partition,
            state: w.state,
            lastRecordId: w.lastRecordId,
            head: w.head,
            micros: w.micros,
          }
        : null,
    );
    if (!w.changed || !w.state) continue;
    touched.push(w.vault);
    snapshots.push(snapshotRow(w.state, w.lastRecordId, w.head));
    positions.push(...positionRows(w.state));
  }
  stats.vaults = touched.length;
  lap('fold');
  await tx.upsertSnapshots(snapshots);
  await tx.replacePositions(touched, positions);
  await tx.insertDeadLetters(deadLetters);
  await tx.savePartition(commit);
  lap('write');
  return { kind: 'applied', stats, nextOffset: commit.nextOffset, vaults };
}

/**
 * Revert: delete the vault's ledger rows from the orphaned blocks, then re-fold the vault from the
 * ledger rows that remain (block, tx, log order), rewriting its equity series, positions and
 * snapshot. A revert that orphans nothing (a duplicate, or blocks the vault never touched) changes
 * nothing. Returns whether anything was removed.
 */
async function revert(
  tx: ProjectionTx,
  w: VaultWork,
  r: VaultRecordOf<'revert'>,
  log: Logger,
): Promise<boolean> {
  const removed = await tx.deleteOrphaned(w.vault, r.payload.fromBlock, r.payload.orphanedBlockHashes);
  if (removed === 0) return false;
  const rows = await tx.ledgerRecords(w.vault);
  await tx.clearVault(w.vault, { snapshot: true });
  let state: VaultState | null = null;
  let micros: Micros | null = null;
  let head = NO_HEAD;
  let lastRecordId = '';
  const seen = new Set<string>();
  const equity: EquityRow[] = [];
  for (const json of rows) {
    const parsed = vaultRecord.safeParse(json);
    if (!parsed.success) {
      log.error({ vault: w.vault }, 'ledger row no longer parses; skipped in re-fold');
      continue;
    }
    const rec = parsed.data;
    const step = foldStep(state, rec);
    if (!step.ok) {
      log.warn({ vault: w.vault, reason: step.reason }, 'ledger row refused in re-fold; skipped');
      continue;
    }
    const point = equityPoint(micros, step.state);
    if (point.row) equity.push(point.row);
    micros = point.micros;
    state = step.state;
    const id = recordId(rec);
    seen.add(id);
    lastRecordId = id;
    const pos = positionOf(rec);
    if (comparePosition(pos, head) > 0) head = pos;
  }
  await tx.insertEquity(equity);
  w.state = state;
  w.micros = micros;
  w.head = head;
  w.lastRecordId = lastRecordId;
  // The remaining ledger is now fully known in memory: no database lookups for this vault.
  w.seen = seen;
  w.storedHead = NO_HEAD;
  w.changed = true;
  log.info({ vault: w.vault, removed, remaining: rows.length }, 'reverted and re-folded vault');
  return true;
}
