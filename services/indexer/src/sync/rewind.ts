import type { BlockHeader } from '@vault-yield/chain';
import type { Logger } from '@vault-yield/common';
import type { ValuationContext, VaultRecord } from '@vault-yield/domain';
import type { IndexerStore, StoredBlock, StoredIndexerVault } from '@vault-yield/store';
import type { IndexerMetrics } from '../metrics.js';
import type { PriceWatch, ValuedSet } from '../price-watch.js';
import { emptyMarkState, rangeFlags, type VaultEntry, type VaultRegistry } from '../vaults.js';
import { planReorg, revertRecord } from './reorg.js';
import { revertSeqs } from './sequence.js';
import type { Cursor } from './types.js';

type Address = `0x${string}`;
type Hash = `0x${string}`;

/** What a rewind reads and moves: the engine's state and reads, nothing else. */
export interface RewindHost {
  readonly chainId: number;
  /** The chain head now (a vault born after the ancestor is valued there). */
  latest(): Promise<number>;
  readonly reorgWindow: number;
  readonly topic: string;
  cursor: Cursor;
  watch: PriceWatch;
  readonly blocks: Map<number, StoredBlock>;
  readonly registry: VaultRegistry;
  readonly aheadVaults: Map<Address, VaultEntry>;
  readonly store: IndexerStore;
  readonly log: Logger;
  readonly metrics: IndexerMetrics;
  headers(numbers: readonly number[]): Promise<Map<number, BlockHeader>>;
  watchAt(block: number, vaults: readonly ValuedSet[], lenient: boolean): Promise<PriceWatch>;
  /** The vault's context at `block` (by its hash when given: EIP-1898). */
  value(block: number, vault: ValuedSet & { vault: Address }, blockHash?: Hash): Promise<ValuationContext>;
  positionsAt(
    vault: Address,
    block: number,
  ): Promise<{ positionId: string; tickLower: number; tickUpper: number }[]>;
  /** Publishes and counts records (resolves once Kafka acknowledged them). */
  publish(records: VaultRecord[]): Promise<void>;
  stored(v: VaultEntry): StoredIndexerVault;
}

/**
 * Compares the kept blocks with the canonical chain. On a difference: finds the common ancestor,
 * publishes a revert for every vault touched by an orphaned block, and moves the checkpoint,
 * registry and valuation state back to the ancestor. A reorg deeper than the window halts
 * (planReorg throws ReorgTooDeepError with what to do).
 */
export async function rewindOnReorg(h: RewindHost): Promise<void> {
  if (h.blocks.size === 0) return;
  const canon = await h.headers([...h.blocks.keys()]);
  const plan = planReorg(h.blocks.values(), canon, h.reorgWindow);
  if (!plan) return;
  const { ancestor, orphaned, depth, touched } = plan;
  h.log.warn(
    {
      ancestor: ancestor.blockNumber,
      depth,
      orphaned: orphaned.map((o) => o.blockNumber),
      vaults: touched.size,
    },
    'reorg: reverting to the common ancestor',
  );
  const A = ancestor.blockNumber;
  const rewindState = A < h.cursor.number;

  // Valuation at the ancestor for every vault concerned (a vault born in an orphaned block may
  // use contracts that did not exist then: its revert is valued at the head, below).
  const involved = [...h.registry.all(), ...h.aheadVaults.values()].filter(
    (v) => rewindState || touched.has(v.vault),
  );
  const atA = await h.watchAt(A, involved, true);
  // The ancestor by its hash: a read that fails fails the rewind (retried from the checkpoint),
  // never stands in another block's state. A vault born after the ancestor (in an orphaned block)
  // may use contracts that did not exist there: it is valued at the head.
  const contextFor = async (v: VaultEntry): Promise<ValuationContext> =>
    v.createdBlock > A ? h.value(await h.latest(), v) : h.value(A, v, ancestor.blockHash as Hash);
  const reverts: VaultRecord[] = [];
  const orphanSeqs = await h.store.seqsAbove(h.chainId, A);
  const reverted: VaultEntry[] = [];
  for (const vault of [...touched.keys()].sort()) {
    const v = h.registry.get(vault) ?? h.aheadVaults.get(vault);
    if (!v) {
      h.log.warn({ vault }, 'reorg: touched vault unknown to the registry; skipping its revert');
      continue;
    }
    const seqs = revertSeqs(
      v.state,
      orphanSeqs.filter((o) => o.vault === vault),
    );
    reverts.push(revertRecord(h.chainId, ancestor, vault, touched.get(vault)!, await contextFor(v), seqs));
    reverted.push(v);
  }

  const changedVaults: StoredIndexerVault[] = [];
  if (rewindState) {
    for (const v of [...h.registry.all()]) if (v.createdBlock > A) h.registry.remove(v.vault);
    h.watch = atA;
    for (const vault of touched.keys()) {
      const v = h.registry.get(vault);
      if (!v) continue;
      const positions = await h.positionsAt(vault, A);
      const state = { ...emptyMarkState(), nextSeq: v.state.nextSeq };
      for (const p of positions) state.positions[p.positionId] = [p.tickLower, p.tickUpper];
      state.flags = rangeFlags(state.positions, h.watch.poolTick(v.pool));
      v.state = state;
      // Its last published context is gone: mark it at the next price move.
      h.registry.setDirty(v, true);
      changedVaults.push(h.stored(v));
    }
  }

  // The numbers the reverts took are saved with the rewind (the vaults' next numbers).
  if (!rewindState) for (const v of reverted) if (v.createdBlock <= A) changedVaults.push(h.stored(v));
  if (reverts.length > 0) await h.publish(reverts);
  // Back to the ancestor, or (orphaned write-ahead rows only) to the unchanged checkpoint.
  const back = rewindState ? { number: A, hash: ancestor.blockHash } : h.cursor;
  if (back.hash === null) {
    // Nothing checkpointed yet (fresh start): only drop the orphaned write-ahead rows.
    await h.store.dropBlocks(
      h.chainId,
      orphaned.map((o) => o.blockHash),
    );
    await h.store.saveBlocks(h.chainId, [], changedVaults);
  } else {
    await h.store.rewind(h.chainId, {
      ancestor: { blockNumber: back.number, blockHash: back.hash },
      topic: h.topic,
      vaultsCreatedAbove: back.number,
      vaults: changedVaults,
    });
  }
  h.cursor = back;
  for (const n of [...h.blocks.keys()]) if (n > back.number) h.blocks.delete(n);
  h.aheadVaults.clear();
  h.metrics.reorgs.inc();
  h.metrics.reorgDepth.set(depth);
  h.metrics.checkpointBlock.set(h.cursor.number);
}
