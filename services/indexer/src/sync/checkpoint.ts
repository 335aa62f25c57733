import { readFactoryInfo } from '@vault-yield/chain';
import {
  checkRoleSettings,
  createIndexerStore,
  createPgPool,
  type IndexerProgress,
  type IndexerStore,
  type Pool,
  type SeqCompaction,
} from '@vault-yield/store';
import { IndexerHaltError } from '../errors.js';
import type { IndexerState } from '../state.js';
import type { VaultEntry, VaultMarkState } from '../vaults.js';
import type { IndexerCommon, IndexerContext } from './context.js';
import type { Batch } from './types.js';

type Address = `0x${string}`;

/**
 * The checkpoint stage: the state loaded from Postgres at start and after a failed step, each
 * batch's write-ahead (kept blocks, vaults created, sequence numbers) before its records go out,
 * and its checkpoint after Kafka's ack.
 */

/** The indexer's pool (its schema, four connections). */
export function createStorePool(c: IndexerCommon): Pool {
  const o = c.options;
  return createPgPool({
    url: o.databaseUrl,
    schema: o.schema,
    applicationName: 'indexer',
    max: 4,
    pooling: o.pooling,
  });
}

/** The checkpoint store on `pool`: behind a transaction-mode pooler the role's search_path stands in for the connect option. */
export async function openStore(c: IndexerCommon, pool: Pool): Promise<IndexerStore> {
  if (c.options.pooling === 'transaction') await checkRoleSettings(pool, { schema: c.options.schema });
  return createIndexerStore(pool);
}

/**
 * A checkpoint is the checkpoint of one topic: resuming it while publishing to another would
 * leave that topic without every record below it. One without a topic (written before
 * migration 0008) is adopted: the next checkpoint writes this indexer's topic.
 */
export function checkTopic(c: IndexerCommon, chainId: number, cp: IndexerProgress['checkpoint']): void {
  const { schema } = c.options;
  const { topic } = c.options.kafka;
  if (!cp || cp.topic === null || cp.topic === topic) return;
  throw new IndexerHaltError(
    `the checkpoint of chain ${chainId} in schema ${schema} (block ${cp.blockNumber}) is of topic ${cp.topic}, ` +
      `but the indexer publishes to topic ${topic}: resuming it would leave ${topic} without every record up to ` +
      `block ${cp.blockNumber}. Point the indexer back at topic ${cp.topic} (KAFKA_TOPIC), or give ${topic} a ` +
      `schema of its own (PROJECTION_SCHEMA): a new schema indexes from the start block, and ` +
      `\`vault-yield reindex --topic ${topic}\` writes the topic and its checkpoint namespace up to the head`,
  );
}

/** Loads checkpoint, vault registry and kept blocks from Postgres; the price watch from the chain at the checkpoint. */
export async function loadCheckpoint(ctx: IndexerContext, state: IndexerState): Promise<void> {
  const snap = await ctx.store.load(state.chainId);
  state.blocks.clear();
  for (const b of snap.blocks) state.blocks.set(b.blockNumber, b);
  for (const v of [...state.registry.all()]) state.registry.remove(v.vault);
  checkTopic(ctx, state.chainId, snap.checkpoint);
  await resumeAt(ctx, state, snap.checkpoint);
  state.aheadVaults.clear();
  for (const v of snap.vaults) {
    (v.createdBlock > state.cursor.number
      ? (e: VaultEntry) => state.aheadVaults.set(e.vault, e)
      : (e: VaultEntry) => state.registry.add(e))({
      vault: v.vault as Address,
      createdBlock: v.createdBlock,
      token0: v.token0 as Address,
      token1: v.token1 as Address,
      pool: v.pool as Address,
      rewardToken: v.rewardToken as Address,
      state: v.state as VaultMarkState,
    });
  }
  state.watch = await ctx.chain.prices.watchAt(state.cursor.number, [...state.registry.all()]);
  ctx.metrics.checkpointBlock.set(state.cursor.number);
  ctx.metrics.vaults.set(state.registry.size);
  ctx.log.info(
    {
      chainId: state.chainId,
      checkpoint: state.cursor,
      vaults: state.registry.size,
      keptBlocks: state.blocks.size,
    },
    'indexer state loaded',
  );
}

/** Moves the cursor to the block to resume after: the checkpoint's, else the one below the start block. */
async function resumeAt(
  ctx: IndexerContext,
  state: IndexerState,
  checkpoint: IndexerProgress['checkpoint'],
): Promise<void> {
  const o = ctx.options;
  const end = o.endBlock;
  if (checkpoint) {
    if (checkpoint.topic === null)
      ctx.log.info(
        { chainId: state.chainId, schema: o.schema, topic: o.kafka.topic },
        'the checkpoint records no topic (written before migration 0008): adopted; the next checkpoint records this one',
      );
    state.cursor = { number: checkpoint.blockNumber, hash: checkpoint.blockHash };
    if (end !== undefined && state.cursor.number > end)
      throw new IndexerHaltError(
        `the checkpoint (block ${state.cursor.number}) is above the end block ${end}: the topic already holds ` +
          'records past it; raise the end block, or start again with a fresh checkpoint schema and topic',
      );
    return;
  }
  const { chain } = ctx;
  const start =
    o.startBlock ?? Number((await chain.rpc(() => readFactoryInfo(chain.client, o.factory))).deploymentBlock);
  if (end !== undefined && start > end)
    throw new IndexerHaltError(`the start block ${start} is above the end block ${end}: nothing to index`);
  const prev = start > 0 ? (await chain.headers([start - 1])).get(start - 1) : undefined;
  state.cursor = { number: start - 1, hash: prev?.hash ?? null };
}

/** Stage 1 of a batch: write-ahead of its kept blocks, the vaults it creates and its numbers. */
export async function saveAhead(ctx: IndexerContext, state: IndexerState, batch: Batch): Promise<void> {
  const { kept, born, seqs } = batch;
  const t0 = performance.now();
  if (kept.length > 0 || born.length > 0 || seqs.length > 0) {
    await ctx.store.saveBlocks(state.chainId, kept, born, seqs);
    for (const k of kept) state.blocks.set(k.blockNumber, k);
  }
  batch.timing.saveMs = performance.now() - t0;
}

/** Stage 3, after the ack: checkpoint with the vault states, slide the kept window. */
export async function commitBatch(ctx: IndexerContext, state: IndexerState, batch: Batch): Promise<void> {
  const { records, vaults, checkpoint } = batch;
  const t0 = performance.now();
  const pruneBelow = checkpoint.number - ctx.options.reorgWindow + 1;
  await ctx.store.commit(state.chainId, {
    checkpoint: { blockNumber: checkpoint.number, blockHash: checkpoint.hash },
    topic: ctx.options.kafka.topic,
    vaults,
    pruneBelow,
  });
  for (const n of state.blocks.keys()) if (n < pruneBelow) state.blocks.delete(n);
  await compactSeqs(ctx, state, pruneBelow);
  state.cursor = { number: checkpoint.number, hash: checkpoint.hash };
  ctx.metrics.batches.inc();
  ctx.log.debug(
    {
      to: checkpoint.number,
      records: records.length,
      vaults: vaults.length,
      saveMs: Math.round(batch.timing.saveMs),
      publishMs: Math.round(batch.timing.publishMs),
      commitMs: Math.round(performance.now() - t0),
    },
    'batch published',
  );
  ctx.metrics.checkpointBlock.set(checkpoint.number);
  ctx.metrics.vaults.set(state.registry.size);
}

/**
 * Compacts the sequence rows below the kept window into spans (the store's compactSeqs): what
 * `republish` needs of them, no reorg reaching below the window. Once the window slid
 * `everyBlocks` since the last run, and again at the next batch while rows are left.
 */
async function compactSeqs(ctx: IndexerContext, state: IndexerState, below: number): Promise<void> {
  const c = ctx.options.seqCompaction;
  if (below <= 0 || (state.compactedBelow >= 0 && below - state.compactedBelow < c.everyBlocks)) return;
  const t0 = performance.now();
  let done: SeqCompaction;
  try {
    done = await ctx.store.compactSeqs(state.chainId, below, {
      maxRows: c.maxRows,
      limits: { maxBlocks: c.maxSpanBlocks, maxMarks: c.maxSpanMarks },
    });
  } catch (err) {
    // Housekeeping: nothing published depends on it. The next batch tries again.
    ctx.log.warn({ err, below }, 'sequence rows not compacted (tried again at the next batch)');
    state.compactedBelow = -1;
    return;
  }
  // Rows left below the block: run again at the next batch.
  state.compactedBelow = done.more ? -1 : below;
  if (done.rows > 0)
    ctx.log.debug(
      { below, rows: done.rows, spans: done.spans, more: done.more, ms: Math.round(performance.now() - t0) },
      'sequence rows compacted',
    );
}
