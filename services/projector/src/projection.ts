import type { Logger } from '@vault-yield/common';
import {
  closeBlock,
  decodeRecord,
  type RecordHead,
  refOf,
  stalePrices,
  type VaultId,
  type VaultRecord,
  type VaultRecordOf,
  vaultId,
  vaultIdOf,
  voidedBy,
} from '@vault-yield/domain';
import type { ProjectionTx, RecordKey } from '@vault-yield/store';
import type { CachedVault, StateCache } from './cache.js';
import { emptySink, foldInto, loadWork, refoldVault, type VaultWork, writeVaults } from './fold.js';
import { type Decoded, positionOf, recordId, unexplainedOutflows } from './rows.js';
import { type Projection, runStreams, type StreamBatch, type StreamProjection } from './runner/index.js';

/**
 * The vault projection, as a declaration the runner feeds (`vaultStreams`: one stream per vault):
 * its batch folds each record the runner lets through into the vault's rows — ledger, equity
 * points, positions, snapshot — through the fold loop (fold.ts), and applies reverts. Whether a
 * record is applied is not decided here but in the runner (runner/decide.ts).
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
  /** The batch's vaults (by vault id) as they stand once this transaction commits (null: no state). */
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

const keyOf = (r: RecordHead): RecordKey => ({
  vault: r.vault,
  chainId: r.chainId,
  blockHash: r.blockHash,
  txHash: r.txHash,
  logIndex: r.logIndex,
});

/** The vault projection's open batch: its vaults' work, the rows waiting for their statements, its report. */
async function openBatch(
  tx: ProjectionTx,
  vaults: readonly VaultId[],
  partition: number,
  opts: VaultProjectionOptions,
): Promise<StreamBatch<Decoded, VaultRecord, VaultWork, VaultBatchOut, ProjectionTx>> {
  const { log, cache } = opts;
  const stale = new Map<string, number>();
  const ms = { read: 0, fold: 0, write: 0 };
  let unexplained = 0;
  let t = performance.now();
  const lap = (phase: keyof typeof ms) => {
    const now = performance.now();
    ms[phase] += now - t;
    t = now;
  };
  const work = await loadWork(tx, vaults, partition, cache);
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
  return {
    streams: work,
    hasState: (w) => w.state !== null,
    async known(suspects) {
      const existing = await tx.existingRecords(suspects.map((d) => keyOf(d.head)));
      const ids = new Set(existing.map((k) => recordId(k as Parameters<typeof recordId>[0])));
      lap('read');
      return ids;
    },
    apply(w, r, raw, id) {
      // A block whose last record was lost ends here (foldInto writes its rows): its losses count too.
      const ending = w.state?.blockStart && r.blockNumber > w.state.blockNumber ? w.state : null;
      const no = foldInto(w, r, sink, { raw }, id);
      if (no) return no;
      for (const p of stalePrices(w.state!)) stale.set(p.feed, (stale.get(p.feed) ?? 0) + 1);
      unexplained += unexplainedOutflows(w.state!);
      if (ending) unexplained += unexplainedOutflows(closeBlock(ending));
      return null;
    },
    async revert(w, r) {
      if (r.type !== 'revert') throw new Error(`invariant: ${r.type} record handed over as a revert`);
      // What was folded so far is written first: the revert reads and rewrites the vault's rows.
      await flush();
      return revert(tx, w, r, log);
    },
    async close(counts) {
      await flush();
      lap('fold');
      const { touched, states } = await writeVaults(tx, work.values(), partition);
      lap('write');
      const out: VaultBatchOut = {
        ...counts,
        vaults: touched.length,
        stale,
        unexplainedOutflows: unexplained,
        states,
        ms,
      };
      return {
        out,
        notify: states,
        async finish(tx2, letters) {
          const flagged = new Set<string>(touched);
          // A letter whose record did not decode has no chain: its address's vaults on every chain.
          const anyChain = new Set<string>();
          for (const l of letters)
            if (l.vault && l.chainId != null) flagged.add(vaultId(l.chainId, l.vault));
            else if (l.vault) anyChain.add(l.vault);
          await tx2.markBehind([...flagged], [...anyChain]);
          lap('write');
        },
      };
    },
  };
}

/**
 * The vault projection as a declaration: one stream per vault — keyed by its vault id
 * (`eip155:{chainId}:{address}`: the same address on two chains is two streams, whatever the
 * message key, which stays the bare address for partitioning) — numbered by the indexer; its
 * records decode their head first (the consumer) and the rest when applied; a batch folds what
 * the runner lets through into rows (`openBatch`).
 */
export function vaultStreams(
  opts: VaultProjectionOptions,
): StreamProjection<Decoded, VaultRecord, VaultWork, VaultBatchOut, ProjectionTx> {
  return {
    locked(partition, offset, epoch) {
      opts.cache?.validate(partition, `${offset}@${epoch}`);
    },
    streamOf: (d) => vaultIdOf(d.head),
    // A letter names its vault's address and chain (dead_letters.vault, chain_id).
    letterOf: (key) => refOf(key),
    placeOf: (d) => ({ position: positionOf(d.head), revert: d.head.type === 'revert' }),
    complete: (d) => d.record(),
    decode(value) {
      const d = decodeRecord(value);
      return d.ok ? d.record : undefined;
    },
    identity: (r) => recordId(r),
    position: positionOf,
    isRevert: (r) => r.type === 'revert',
    voids: (revert, r) => revert.type === 'revert' && voidedBy(revert.payload)(r),
    open: (tx, vaults, partition) => openBatch(tx, vaults as readonly VaultId[], partition, opts),
  };
}

/** The vault projection, fed by the runner (`runStreams` decides which records it applies). */
export function createVaultProjection(
  opts: VaultProjectionOptions,
): Projection<Decoded, VaultBatchOut, ProjectionTx> {
  return runStreams(vaultStreams(opts), opts.log);
}

/**
 * Revert: delete the vault's ledger rows from the orphaned blocks, then re-fold the vault from the
 * records that remain (its orphaned marks, which have no rows, left out). A revert that orphans
 * nothing (a duplicate, or blocks the vault never touched) changes nothing. Returns whether
 * anything was removed, and the records the vault was re-folded from (null: no re-fold).
 */
async function revert(
  tx: ProjectionTx,
  w: VaultWork,
  r: VaultRecordOf<'revert'>,
  log: Logger,
): Promise<{ reverted: boolean; refolded: VaultRecord[] | null }> {
  const { fromBlock, orphanedBlockHashes } = r.payload;
  const removed = await tx.deleteOrphaned(w.id, fromBlock, orphanedBlockHashes);
  // Marks have no ledger rows: a vault whose fold reached the window may have some to drop.
  if (removed === 0 && w.head.blockNumber < fromBlock) return { reverted: false, refolded: null };
  const { remaining, droppedMarks, folded } = await refoldVault(
    tx,
    w,
    (reason) => log.warn({ vault: w.id, reason }, 'ledger row refused in re-fold; skipped'),
    log,
    { fromBlock, blockHashes: new Set(orphanedBlockHashes) },
  );
  if (removed + droppedMarks === 0) return { reverted: false, refolded: folded };
  log.info({ vault: w.id, removed: removed + droppedMarks, remaining }, 'reverted and re-folded vault');
  return { reverted: true, refolded: folded };
}
