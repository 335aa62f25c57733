import { classifyRpcError, getHeadNumber } from '@vault-yield/chain';
import type { Logger } from '@vault-yield/common';
import type { Pool } from '@vault-yield/store';
import type { ResolvedIndexerConfig } from './config.js';
import { InconsistentRangeError, IndexerHaltError } from './errors.js';
import type { IndexerMetrics } from './metrics.js';
import { BatchPipeline } from './pipeline.js';
import { createIndexerState, type IndexerState } from './state.js';
import { type ChainAccess, connectNode, type NodeAccess, openChain } from './sync/chain.js';
import {
  checkTopic,
  commitBatch,
  createStorePool,
  loadCheckpoint,
  openStore,
  saveAhead,
} from './sync/checkpoint.js';
import type { IndexerCommon, IndexerContext } from './sync/context.js';
import { discover } from './sync/discover.js';
import { fetchChunk } from './sync/fetch.js';
import { createPublishStage, ensureTopic, type PublishStage } from './sync/publish.js';
import { createChunkQueue } from './sync/ranges.js';
import { rewindOnReorg } from './sync/rewind.js';
import { type Batch, ReorgDetected, sleep } from './sync/types.js';
import { valuateChunk } from './sync/valuate.js';

/** The engine's options: the resolved config (every default filled in) and its collaborators. */
export type IndexerOptions = ResolvedIndexerConfig & { logger: Logger; metrics: IndexerMetrics };

export interface IndexerStatus {
  chainId: number;
  checkpoint: { blockNumber: number; blockHash: string | null };
  head: number;
  /** The configured end block, null when following the head. */
  endBlock: number | null;
  /** True once the end block is checkpointed and the indexer has finished. */
  ended: boolean;
  vaults: number;
  recordsPublished: number;
  /** Bytes of record values acknowledged by Kafka. */
  bytesPublished: number;
  /** eth_calls made to read holdings and prices at record blocks (VaultLens reads, each a batch of vaults). */
  valuationCalls: number;
  /** How the valuation lens runs (state override or creation code); null until the first read settles `auto`. */
  valuationLens: 'override' | 'create' | null;
  /** Blocks with records, each valued with one read (round trip). */
  valuedBlocks: number;
  rpcCalls: number;
  rpcHttpRequests: number;
  /** How it learns of new blocks: a WebSocket `newHeads` subscription that has delivered, or polling. */
  heads: 'subscribed' | 'polling';
}

/**
 * The indexing engine: scans the chain from the checkpoint, publishes the vault records (with
 * their valuation contexts, marks and reverts) to the log, checkpoints after Kafka's ack. It only
 * orchestrates: each stage (sync/) moves the one state object (state.ts) — discover a segment's
 * vaults and filters, fetch its ranges in the sizes `ranges` learns, valuate each chunk into a
 * batch, publish it, checkpoint it, and rewind on a reorg.
 */
export interface IndexerEngine {
  readonly state: IndexerState;
  /** Connects to the node, Postgres and Kafka (the topic is ensured; the publisher thread boots meanwhile). */
  open(): Promise<void>;
  /** Loads checkpoint, vault registry and kept blocks (sync/checkpoint.ts). */
  load(): Promise<void>;
  /**
   * Runs until stopped (resolves), until the end block is checkpointed (resolves, `state.ended`),
   * or halted (rejects with an IndexerHaltError).
   */
  run(): Promise<void>;
  stop(): void;
  /** Closes the publisher thread, the pool and the head watcher (once: later calls wait for the first). */
  close(): Promise<void>;
  /** Resolves when the checkpoint reaches `block`. */
  waitFor(block: number): Promise<void>;
  status(): IndexerStatus;
}

/** What the engine holds besides the state: its context, the connections open() made, waiters. */
interface Engine {
  readonly common: IndexerCommon;
  readonly state: IndexerState;
  readonly abort: AbortController;
  node?: NodeAccess;
  chain?: ChainAccess;
  pool?: Pool;
  publisher?: PublishStage;
  /** Set once open() succeeded. */
  ctx?: IndexerContext;
  readonly waiters: { block: number; resolve: () => void }[];
  closed?: Promise<void>;
}

export function createIndexerEngine(o: IndexerOptions): IndexerEngine {
  const abort = new AbortController();
  const e: Engine = {
    common: { options: o, log: o.logger, metrics: o.metrics, signal: abort.signal },
    state: createIndexerState(o),
    abort,
    waiters: [],
  };
  return {
    state: e.state,
    open: () => open(e),
    load: () => loadCheckpoint(contextOf(e), e.state),
    run: () => run(e, contextOf(e)),
    stop: () => e.abort.abort(),
    close: () => close(e),
    waitFor(block) {
      if (e.state.cursor.number >= block) return Promise.resolve();
      return new Promise((resolve) => e.waiters.push({ block, resolve }));
    },
    status: () => status(e),
  };
}

function contextOf(e: Engine): IndexerContext {
  if (!e.ctx) throw new Error('the indexer engine is not open');
  return e.ctx;
}

async function open(e: Engine): Promise<void> {
  const c = e.common;
  e.node = connectNode(c);
  const chain = await openChain(c, e.node);
  e.chain = chain;
  e.state.chainId = chain.chainId;
  // Every series of this indexer is its chain's (the node's eth_chainId read, made before, too).
  c.metrics.setChain(chain.chainId);
  const pool = createStorePool(c);
  e.pool = pool;
  const store = await openStore(c, pool);
  // A checkpoint of another topic is refused before anything touches Kafka (not even the topic
  // is created); the load checks again, as it reloads after failures.
  checkTopic(c, e.state.chainId, await store.checkpoint(e.state.chainId));
  const publisher = createPublishStage(c, e.state);
  e.publisher = publisher;
  try {
    await ensureTopic(c, e.state.chainId);
  } catch (err) {
    await close(e);
    throw err;
  }
  e.ctx = { ...c, chain, store, publisher };
}

function close(e: Engine): Promise<void> {
  e.closed ??= (async () => {
    await e.publisher?.close();
    await e.pool?.end().catch(() => {});
    await e.chain?.heads.close();
  })();
  return e.closed;
}

function status(e: Engine): IndexerStatus {
  const { state, node, chain } = e;
  return {
    chainId: state.chainId,
    checkpoint: { blockNumber: state.cursor.number, blockHash: state.cursor.hash },
    head: state.head,
    endBlock: e.common.options.endBlock ?? null,
    ended: state.ended,
    vaults: state.registry.size,
    recordsPublished: state.totals.records,
    bytesPublished: state.totals.bytes,
    valuationCalls: chain?.valuator.calls ?? 0,
    valuationLens: chain?.valuator.mode ?? null,
    valuedBlocks: state.totals.valuedBlocks,
    rpcCalls: node?.stats.calls ?? 0,
    rpcHttpRequests: node?.stats.httpRequests ?? 0,
    heads: chain?.heads.mode ?? 'polling',
  };
}

/** The checkpoint moved: resolves the waiters it reached. */
function advanced(e: Engine): void {
  for (let i = e.waiters.length - 1; i >= 0; i--) {
    const w = e.waiters[i]!;
    if (e.state.cursor.number >= w.block) {
      e.waiters.splice(i, 1);
      w.resolve();
    }
  }
}

/** The end block is checkpointed (a reorg found later would move the cursor back below it). */
const atEnd = (e: Engine) =>
  e.common.options.endBlock !== undefined && e.state.cursor.number >= e.common.options.endBlock;

async function run(e: Engine, ctx: IndexerContext): Promise<void> {
  const streak = { failures: 0, since: 0 };
  // Before the first step the kept blocks are checked for a reorg; after a failed step the
  // state is reloaded from the checkpoint and checked again. Both inside the loop: a read that
  // fails there (the node refusing one call) is retried like any step, under the same give-up.
  let reload = false;
  let check = true;
  while (!e.abort.signal.aborted) {
    try {
      if (reload) {
        // Processing may have moved in-memory state past the checkpoint: start again from it.
        await loadCheckpoint(ctx, e.state);
        reload = false;
      }
      if (check) {
        await rewindOnReorg(ctx, e.state);
        check = false;
      }
      const seen = ctx.chain.heads.heads;
      const progressed = await step(e, ctx);
      streak.failures = 0;
      // A step that found nothing new has just checked that the checkpointed tip is still
      // canonical (a reorg there moves the cursor back below the end block: index again).
      if (!progressed && atEnd(e)) {
        e.state.ended = true;
        return;
      }
      // The next head wakes it when a WebSocket announces heads; the poll interval is the floor.
      if (!progressed) await ctx.chain.heads.wait(ctx.options.pollIntervalMs, ctx.signal, seen);
    } catch (err) {
      if (err instanceof IndexerHaltError) throw err;
      if (e.abort.signal.aborted) break;
      await stepFailed(ctx, streak, err);
      reload = true;
      check = true;
    }
  }
}

/**
 * A failed step: counted and logged, then a pause growing with the streak and a new publisher
 * thread if it died. Gives up (throws) only on a lasting failure: a Kafka leader election or a
 * node restart under load can fail a dozen steps in a row and still pass within a minute or two.
 */
async function stepFailed(
  ctx: IndexerContext,
  streak: { failures: number; since: number },
  err: unknown,
): Promise<void> {
  if (streak.failures++ === 0) streak.since = Date.now();
  const { failures } = streak;
  const kind = err instanceof InconsistentRangeError ? 'inconsistent' : classifyRpcError(err);
  if (err instanceof InconsistentRangeError) ctx.metrics.inconsistentRanges.inc();
  else ctx.metrics.rpcErrors.inc({ kind });
  ctx.log.error({ err, failures, kind }, 'indexing step failed; reloading state from the checkpoint');
  if (failures >= 8 && Date.now() - streak.since >= ctx.options.giveUpAfterMs)
    throw new IndexerHaltError(
      `indexer gave up after ${failures} failed attempts over ${Math.round((Date.now() - streak.since) / 1000)} s: ${(err as Error).message}`,
    );
  await sleep(Math.min(10_000, 200 * 2 ** failures), ctx.signal);
  await ctx.publisher
    .ensure()
    .catch((e: unknown) =>
      ctx.log.error({ err: e }, 'could not start a publisher thread; retrying at the next failure'),
    );
}

/** One poll: process what is new (true) or check the tip for a reorg (false). */
async function step(e: Engine, ctx: IndexerContext): Promise<boolean> {
  const { state } = e;
  const o = ctx.options;
  state.head = await ctx.chain.rpc(() => getHeadNumber(ctx.chain.client));
  ctx.metrics.headBlock.set(state.head);
  // Never past the confirmed head, nor past the end block.
  const confirmed = state.head - o.confirmations;
  const target = o.endBlock === undefined ? confirmed : Math.min(confirmed, o.endBlock);
  if (target <= state.cursor.number) {
    // Nothing new: the tip may still have been replaced (anvil_reorg keeps the height).
    if (state.cursor.hash && state.blocks.has(state.cursor.number)) {
      const h = (await ctx.chain.headers([state.cursor.number])).get(state.cursor.number);
      if (!h || h.hash !== state.cursor.hash) await rewindOnReorg(ctx, state);
    }
    return false;
  }
  const span = o.maxBlockRange * o.concurrency * 8;
  const to = Math.min(target, state.cursor.number + span);
  try {
    await runSegment(e, ctx, state.cursor.number + 1, to, target);
  } catch (err) {
    if (!(err instanceof ReorgDetected)) throw err;
    ctx.log.warn({ cursor: state.cursor, reason: err.message }, 'reorg detected');
    await rewindOnReorg(ctx, state);
  }
  return true;
}

/**
 * One segment: discovered, its ranges fetched ahead in order, each chunk valued into a batch that
 * goes through write-ahead, publish and checkpoint (BatchPipeline: neighbouring batches overlap,
 * and preparing the next batch overlaps all of them).
 */
async function runSegment(e: Engine, ctx: IndexerContext, from: number, to: number, target: number) {
  const { state } = e;
  const t0 = performance.now();
  const seg = await discover(ctx, state, from, to, target);
  ctx.log.debug(
    { from, to, ms: Math.round(performance.now() - t0), vaults: seg.pendingVaults.size },
    'segment discovered',
  );
  const chunks = createChunkQueue({
    planner: state.ranges,
    concurrency: ctx.options.concurrency,
    from,
    to,
    fetch: (f, t) => fetchChunk(ctx, state, seg, f, t),
  });
  const pipeline = new BatchPipeline<Batch>({
    save: (b) => saveAhead(ctx, state, b),
    publish: (b) => ctx.publisher.publishBatch(b),
    checkpoint: async (b) => {
      await commitBatch(ctx, state, b);
      advanced(e);
    },
  });
  state.tip = { ...state.cursor };
  try {
    chunks.dispatch();
    while (chunks.size > 0 && !e.abort.signal.aborted) {
      const next = chunks.take()!;
      const w0 = performance.now();
      const chunk = await next;
      const waited = performance.now() - w0;
      chunks.adapt(chunk);
      const p0 = performance.now();
      const batch = await valuateChunk(ctx, state, seg, chunk);
      const prepMs = performance.now() - p0;
      await pipeline.push(batch);
      ctx.log.debug(
        {
          from: chunk.from,
          to: chunk.to,
          logs: chunk.logs.length,
          waitMs: Math.round(waited),
          prepareMs: Math.round(prepMs),
          next: state.ranges.chunkSize,
        },
        'chunk prepared',
      );
    }
    await pipeline.drain();
  } finally {
    await Promise.allSettled([pipeline.settled(), chunks.settled()]);
  }
}
