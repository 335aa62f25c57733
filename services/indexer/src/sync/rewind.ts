import { getHeadNumber, readVaultPositions } from '@vault-yield/chain';
import type { ValuationContext, VaultRecord } from '@vault-yield/domain';
import type { StoredBlock, StoredIndexerVault } from '@vault-yield/store';
import type { IndexerState } from '../state.js';
import { emptyMarkState, rangeFlags, storedVault, type VaultEntry } from '../vaults.js';
import type { IndexerContext } from './context.js';
import { planReorg, type ReorgPlan, revertRecord } from './reorg.js';
import { revertSeqs } from './sequence.js';

type Hash = `0x${string}`;

/**
 * The rewind stage. Compares the kept blocks with the canonical chain. On a difference: finds the
 * common ancestor, publishes a revert for every vault touched by an orphaned block, and moves the
 * checkpoint, registry and price watch back to the ancestor. A reorg deeper than the window halts
 * (planReorg throws ReorgTooDeepError with what to do).
 */
export async function rewindOnReorg(ctx: IndexerContext, state: IndexerState): Promise<void> {
  if (state.blocks.size === 0) return;
  const canon = await ctx.chain.headers([...state.blocks.keys()]);
  const plan = planReorg(state.blocks.values(), canon, ctx.options.reorgWindow);
  if (!plan) return;
  const { ancestor, orphaned, depth, touched } = plan;
  ctx.log.warn(
    {
      ancestor: ancestor.blockNumber,
      depth,
      orphaned: orphaned.map((o) => o.blockNumber),
      vaults: touched.size,
    },
    'reorg: reverting to the common ancestor',
  );
  const A = ancestor.blockNumber;
  const rewindState = A < state.cursor.number;

  // Price watch at the ancestor for every vault concerned (a vault born in an orphaned block may
  // use contracts that did not exist then: its revert is valued at the head, below).
  const involved = [...state.registry.all(), ...state.aheadVaults.values()].filter(
    (v) => rewindState || touched.has(v.vault),
  );
  const atA = await ctx.chain.prices.watchAt(A, involved, true);
  const { reverts, reverted } = await revertsOf(ctx, state, plan);

  const changedVaults: StoredIndexerVault[] = [];
  if (rewindState) {
    for (const v of [...state.registry.all()]) if (v.createdBlock > A) state.registry.remove(v.vault);
    state.watch = atA;
    for (const vault of touched.keys()) {
      const v = state.registry.get(vault);
      if (!v) continue;
      await resetToAncestor(ctx, state, v, A);
      changedVaults.push(storedVault(v));
    }
  }

  // The numbers the reverts took are saved with the rewind (the vaults' next numbers).
  if (!rewindState) for (const v of reverted) if (v.createdBlock <= A) changedVaults.push(storedVault(v));
  if (reverts.length > 0) await ctx.publisher.publish(reverts);
  // Back to the ancestor, or (orphaned write-ahead rows only) to the unchanged checkpoint.
  const back = rewindState ? { number: A, hash: ancestor.blockHash } : state.cursor;
  await storeRewind(ctx, state, back, orphaned, changedVaults);
  state.cursor = back;
  for (const n of [...state.blocks.keys()]) if (n > back.number) state.blocks.delete(n);
  state.aheadVaults.clear();
  ctx.metrics.reorgs.inc();
  ctx.metrics.reorgDepth.set(depth);
  ctx.metrics.checkpointBlock.set(state.cursor.number);
}

/** A revert for every vault the orphaned blocks touched, valued at the ancestor, numbered past the orphaned rows. */
async function revertsOf(
  ctx: IndexerContext,
  state: IndexerState,
  { ancestor, touched }: ReorgPlan,
): Promise<{ reverts: VaultRecord[]; reverted: VaultEntry[] }> {
  const A = ancestor.blockNumber;
  const { chain } = ctx;
  const value = async (block: number, v: VaultEntry, hash?: Hash) =>
    (await chain.rpc(() => chain.valuator.read(block, [v], hash))).get(v.vault)!;
  // The ancestor by its hash: a read that fails fails the rewind (retried from the checkpoint),
  // never stands in another block's state. A vault born after the ancestor (in an orphaned block)
  // may use contracts that did not exist there: it is valued at the head (read when asked: a check
  // on restart comes before any step has read the head).
  const contextFor = async (v: VaultEntry): Promise<ValuationContext> => {
    if (v.createdBlock <= A) return value(A, v, ancestor.blockHash as Hash);
    state.head = await chain.rpc(() => getHeadNumber(chain.client));
    return value(state.head, v);
  };
  const reverts: VaultRecord[] = [];
  const orphanSeqs = await ctx.store.seqsAbove(state.chainId, A);
  const reverted: VaultEntry[] = [];
  for (const vault of [...touched.keys()].sort()) {
    const v = state.registry.get(vault) ?? state.aheadVaults.get(vault);
    if (!v) {
      ctx.log.warn({ vault }, 'reorg: touched vault unknown to the registry; skipping its revert');
      continue;
    }
    const seqs = revertSeqs(
      v.state,
      orphanSeqs.filter((o) => o.vault === vault),
    );
    reverts.push(
      revertRecord(state.chainId, ancestor, vault, touched.get(vault)!, await contextFor(v), seqs),
    );
    reverted.push(v);
  }
  return { reverts, reverted };
}

/** A vault's mark state as at the ancestor: its positions read there, its next number kept, due for a mark. */
async function resetToAncestor(ctx: IndexerContext, state: IndexerState, v: VaultEntry, A: number) {
  const { chain } = ctx;
  const positions = await chain.rpc(() => readVaultPositions(chain.client, v.vault, A));
  const mark = { ...emptyMarkState(), nextSeq: v.state.nextSeq };
  for (const p of positions) mark.positions[p.positionId] = [p.tickLower, p.tickUpper];
  mark.flags = rangeFlags(mark.positions, state.watch.poolTick(v.pool));
  v.state = mark;
  // Its last published context is gone: mark it at the next price move.
  state.registry.setDirty(v, true);
}

/** The rewind in Postgres: back to `back`, or only the orphaned write-ahead rows dropped before any checkpoint. */
async function storeRewind(
  ctx: IndexerContext,
  state: IndexerState,
  back: IndexerState['cursor'],
  orphaned: readonly StoredBlock[],
  changedVaults: StoredIndexerVault[],
): Promise<void> {
  if (back.hash === null) {
    // Nothing checkpointed yet (fresh start): only drop the orphaned write-ahead rows.
    await ctx.store.dropBlocks(
      state.chainId,
      orphaned.map((o) => o.blockHash),
    );
    await ctx.store.saveBlocks(state.chainId, [], changedVaults);
    return;
  }
  await ctx.store.rewind(state.chainId, {
    ancestor: { blockNumber: back.number, blockHash: back.hash },
    topic: ctx.options.kafka.topic,
    vaultsCreatedAbove: back.number,
    vaults: changedVaults,
  });
}
