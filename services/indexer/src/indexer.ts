import {
  type BlockHeader,
  type BlockValuator,
  type ChainClient,
  classifyRpcError,
  createBlockValuator,
  createCountingChainClient,
  createHeadWatcher,
  createValuationReader,
  describeRpcError,
  getChainIdFromNode,
  getHeaders,
  getHeadNumber,
  getLogsAdaptive,
  getLogsByBlockHash,
  type HeadWatcher,
  type IndexerLog,
  type LensMode,
  type LogFilter,
  type RpcStats,
  readFactoryInfo,
  readVaultPositions,
  readVaultRewardTokens,
  refOf,
  withRetry,
} from '@vault-yield/chain';
import type { Logger } from '@vault-yield/common';
import { type VaultRecord, ZERO_HASH } from '@vault-yield/domain';
import { createLogAdmin } from '@vault-yield/log';
import {
  checkRoleSettings,
  createIndexerStore,
  createPgPool,
  type IndexerSnapshot,
  type IndexerStore,
  type Pool,
  type SeqCompaction,
  type StoredBlock,
  type StoredIndexerVault,
} from '@vault-yield/store';
import type { ResolvedIndexerConfig } from './config.js';
import { BadLogError, InconsistentRangeError, IndexerHaltError } from './errors.js';
import type { IndexerMetrics } from './metrics.js';
import { BatchPipeline } from './pipeline.js';
import { PriceWatch } from './price-watch.js';
import { createThreadedPublisher, type RecordPublisher } from './publisher/index.js';
import { type BlockWalk, processBlock } from './sync/block.js';
import { completeByBloom, missingChunkLogs, type ShortAnswers } from './sync/bloom.js';
import { planSegment } from './sync/discover.js';
import { uniqueLogs } from './sync/filters.js';
import { checkConsistency, decodeAll, RangePlanner } from './sync/ranges.js';
import { createPriceReads, type PriceReads } from './sync/readings.js';
import { rewindOnReorg } from './sync/rewind.js';
import { assignSeqs } from './sync/sequence.js';
import {
  type Batch,
  type Cursor,
  FACTORY_TOPICS,
  type FetchedChunk,
  ReorgDetected,
  type Segment,
  sleep,
} from './sync/types.js';
import { valuateRecords } from './sync/valuate.js';
import { copyMarkState, type VaultEntry, type VaultMarkState, VaultRegistry } from './vaults.js';

type Address = `0x${string}`;
type Hash = `0x${string}`;

/** The engine's options: the resolved config (every default filled in) and its collaborators. */
export type IndexerOptions = ResolvedIndexerConfig & { logger: Logger; metrics: IndexerMetrics };

/**
 * The indexing engine: scans the chain from the checkpoint, publishes the vault records (with
 * their valuation contexts, marks and reverts) to the log, checkpoints after Kafka's ack.
 */
export class IndexerEngine {
  chainId = 0;
  cursor: Cursor = { number: -1, hash: null };
  /** End of the last prepared chunk (ahead of `cursor` while its batch publishes). */
  private tip: Cursor = { number: -1, hash: null };
  head = 0;
  recordsPublished = 0;
  /** Bytes of record values Kafka acknowledged (what the log stores per record, before compression). */
  bytesPublished = 0;
  /** Blocks whose records were valued (one valuation read each). */
  valuedBlocks = 0;
  /** True once run() returned because the end block is checkpointed (and still canonical). */
  ended = false;
  readonly registry = new VaultRegistry();
  private watch = new PriceWatch();
  /** The kept block window, mirror of indexer_blocks (write-ahead rows included). */
  private readonly blocks = new Map<number, StoredBlock>();
  /** Vaults written ahead (created above the checkpoint, maybe published): only for reverts. */
  private readonly aheadVaults = new Map<Address, VaultEntry>();
  private client!: ChainClient;
  private logsClient!: ChainClient;
  private stats!: RpcStats;
  private valuator!: BlockValuator;
  private snapshots!: PriceReads;
  /** New heads over WebSocket (RPC_WS_URL), else polling. */
  heads!: HeadWatcher;
  private pool!: Pool;
  private store!: IndexerStore;
  /** Settles once the publisher thread is up (see open()). */
  private publisher!: Promise<RecordPublisher>;
  private readonly ranges: RangePlanner;
  private readonly abort = new AbortController();
  private readonly log: Logger;
  private readonly metrics: IndexerMetrics;
  private readonly waiters: { block: number; resolve: () => void }[] = [];
  /** The block below which the sequence rows were last compacted (-1: not yet this run). */
  private compactedBelow = -1;

  constructor(private readonly o: IndexerOptions) {
    this.log = o.logger;
    this.metrics = o.metrics;
    this.ranges = new RangePlanner(o.maxBlockRange, o.targetLogsPerChunk);
  }

  private readonly heartbeatOf = (feed: Address): number =>
    this.o.heartbeats.byFeed[feed] ?? this.o.heartbeats.default;

  /** What the block walk moves (the watch is replaced on reloads and reorgs). */
  private get walk(): BlockWalk {
    return {
      chainId: this.chainId,
      registry: this.registry,
      watch: this.watch,
      cadence: this.o.mark,
      heartbeatOf: this.heartbeatOf,
    };
  }

  get valuationCalls(): number {
    return this.valuator?.calls ?? 0;
  }

  get valuationLens(): LensMode | null {
    return this.valuator?.mode ?? null;
  }

  get rpcStats(): RpcStats {
    return this.stats;
  }

  get stopping(): boolean {
    return this.abort.signal.aborted;
  }

  // ---------------------------------------------------------------- setup

  async open(): Promise<void> {
    const { client, logsClient, stats } = createCountingChainClient({
      rpcUrl: this.o.rpcUrl,
      chainId: this.o.chainId,
      cacheTime: 0,
      timeoutMs: this.o.rpcTimeoutMs,
      observer: this.metrics.rpc,
    });
    this.client = client;
    this.logsClient = logsClient;
    this.stats = stats;
    this.chainId = this.o.chainId ?? (await this.rpc(() => getChainIdFromNode(client)));
    this.snapshots = createPriceReads({
      client,
      reader: createValuationReader(client, { factory: this.o.factory, cacheSize: 50_000 }),
      factory: this.o.factory,
      rpc: (fn) => this.rpc(fn),
    });
    this.valuator = createBlockValuator(client, {
      factory: this.o.factory,
      heartbeatOf: this.heartbeatOf,
      lens: this.o.valuationLens,
      onMode: (mode) =>
        mode === 'override'
          ? this.log.info({ mode }, 'valuation lens runs from a state override (large batches)')
          : this.log.warn(
              { mode },
              'the node does not take eth_call state overrides: the valuation lens runs as creation code (24 KiB answers, ≈ 26 vaults a call)',
            ),
    });
    this.heads = createHeadWatcher({
      wsUrl: this.o.rpcWsUrl,
      onModeChange: (mode, err) =>
        mode === 'subscribed'
          ? this.log.info({ mode }, 'following new heads over WebSocket')
          : this.log.warn({ mode, err }, 'new-head subscription lost; polling until it is back'),
    });
    this.pool = createPgPool({
      url: this.o.databaseUrl,
      schema: this.o.schema,
      applicationName: 'indexer',
      max: 4,
      pooling: this.o.pooling,
    });
    // Behind a transaction-mode pooler the role's search_path stands in for the connect option.
    if (this.o.pooling === 'transaction') await checkRoleSettings(this.pool, { schema: this.o.schema });
    this.store = createIndexerStore(this.pool);
    // A checkpoint of another topic is refused before anything touches Kafka (not even the topic
    // is created); load() checks again, as it reloads after failures.
    this.checkTopic(await this.store.checkpoint(this.chainId));
    // The publisher thread boots (and connects its producer) while the topic is ensured, the state
    // loaded and the first ranges read: the first publish waits for it, not start().
    this.publisher = this.startPublisher();
    try {
      const admin = await createLogAdmin({
        brokers: this.o.kafka.brokers,
        clientId: 'indexer-admin',
        logger: this.log,
      });
      try {
        await admin.ensureTopic({
          topic: this.o.kafka.topic,
          partitions: this.o.kafka.partitions,
          replicationFactor: this.o.kafka.replicationFactor,
        });
      } finally {
        await admin.close();
      }
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  private startPublisher(): Promise<RecordPublisher> {
    const t0 = performance.now();
    const p = createThreadedPublisher({
      brokers: this.o.kafka.brokers,
      clientId: 'indexer',
      topic: this.o.kafka.topic,
      logger: this.log,
      encoding: this.o.kafka.encoding,
      onAcked: (_records, bytes) => {
        this.bytesPublished += bytes;
        this.metrics.recordBytes.inc(bytes);
      },
    });
    p.then(
      () => this.log.debug({ ms: Math.round(performance.now() - t0) }, 'publisher thread connected'),
      (err: unknown) => this.log.error({ err }, 'publisher thread failed to start'),
    );
    return p;
  }

  /** A publisher thread that died (or never started) is replaced; unacknowledged batches are republished from the checkpoint. */
  private async ensurePublisher(): Promise<void> {
    const current = await this.publisher.catch(() => undefined);
    if (current && !current.broken) return;
    this.log.warn('publisher thread is gone; starting a new one');
    await current?.close().catch(() => {});
    this.publisher = this.startPublisher();
    await this.publisher;
  }

  private closed?: Promise<void>;

  /** Closes the publisher thread and the pool (once: later calls wait for the first). */
  close(): Promise<void> {
    this.closed ??= (async () => {
      await this.publisher?.then((p) => p.close()).catch(() => {});
      await this.pool?.end().catch(() => {});
      await this.heads?.close();
    })();
    return this.closed;
  }

  stop(): void {
    this.abort.abort();
  }

  /** Loads checkpoint, vault registry and kept blocks from Postgres; valuation state from the chain at the checkpoint. */
  async load(): Promise<void> {
    const snap = await this.store.load(this.chainId);
    this.blocks.clear();
    for (const b of snap.blocks) this.blocks.set(b.blockNumber, b);
    for (const v of [...this.registry.all()]) this.registry.remove(v.vault);
    const end = this.o.endBlock;
    this.checkTopic(snap.checkpoint);
    if (snap.checkpoint) {
      if (snap.checkpoint.topic === null)
        this.log.info(
          { chainId: this.chainId, schema: this.o.schema, topic: this.o.kafka.topic },
          'the checkpoint records no topic (written before migration 0008): adopted; the next checkpoint records this one',
        );
      this.cursor = { number: snap.checkpoint.blockNumber, hash: snap.checkpoint.blockHash };
      if (end !== undefined && this.cursor.number > end)
        throw new IndexerHaltError(
          `the checkpoint (block ${this.cursor.number}) is above the end block ${end}: the topic already holds ` +
            'records past it; raise the end block, or start again with a fresh checkpoint schema and topic',
        );
    } else {
      const start =
        this.o.startBlock ??
        Number((await this.rpc(() => readFactoryInfo(this.client, this.o.factory))).deploymentBlock);
      if (end !== undefined && start > end)
        throw new IndexerHaltError(
          `the start block ${start} is above the end block ${end}: nothing to index`,
        );
      const prev = start > 0 ? (await this.headers([start - 1])).get(start - 1) : undefined;
      this.cursor = { number: start - 1, hash: prev?.hash ?? null };
    }
    this.aheadVaults.clear();
    for (const v of snap.vaults) {
      (v.createdBlock > this.cursor.number
        ? (e: VaultEntry) => this.aheadVaults.set(e.vault, e)
        : (e: VaultEntry) => this.registry.add(e))({
        vault: v.vault as Address,
        createdBlock: v.createdBlock,
        token0: v.token0 as Address,
        token1: v.token1 as Address,
        pool: v.pool as Address,
        rewardToken: v.rewardToken as Address,
        state: v.state as VaultMarkState,
      });
    }
    this.watch = await this.snapshots.watchAt(this.cursor.number, [...this.registry.all()]);
    this.metrics.checkpointBlock.set(this.cursor.number);
    this.metrics.vaults.set(this.registry.size);
    this.log.info(
      {
        chainId: this.chainId,
        checkpoint: this.cursor,
        vaults: this.registry.size,
        keptBlocks: this.blocks.size,
      },
      'indexer state loaded',
    );
  }

  /**
   * A checkpoint is the checkpoint of one topic: resuming it while publishing to another would
   * leave that topic without every record below it. One without a topic (written before
   * migration 0008) is adopted: the next checkpoint writes this indexer's topic.
   */
  private checkTopic(cp: IndexerSnapshot['checkpoint']): void {
    if (!cp || cp.topic === null || cp.topic === this.o.kafka.topic) return;
    const { schema } = this.o;
    const { topic } = this.o.kafka;
    throw new IndexerHaltError(
      `the checkpoint of chain ${this.chainId} in schema ${schema} (block ${cp.blockNumber}) is of topic ${cp.topic}, ` +
        `but the indexer publishes to topic ${topic}: resuming it would leave ${topic} without every record up to ` +
        `block ${cp.blockNumber}. Point the indexer back at topic ${cp.topic} (KAFKA_TOPIC), or give ${topic} a ` +
        `schema of its own (PROJECTION_SCHEMA): a new schema indexes from the start block, and ` +
        `\`vault-yield reindex --topic ${topic}\` writes the topic and its checkpoint namespace up to the head`,
    );
  }

  // ---------------------------------------------------------------- RPC helpers

  private rpc<T>(fn: () => Promise<T>): Promise<T> {
    return withRetry(fn, {
      retries: 6,
      signal: this.abort.signal,
      onRetry: ({ attempt, kind, error, delayMs }) => {
        this.metrics.rpcErrors.inc({ kind });
        this.log.warn(
          { attempt, kind, delayMs: Math.round(delayMs), err: describeRpcError(error) },
          'RPC call failed; retrying',
        );
      },
    });
  }

  /** Headers by number; `required`: a block the node has not got is retried ('behind'), never left out. */
  private async headers(numbers: readonly number[], required = false): Promise<Map<number, BlockHeader>> {
    const out = new Map<number, BlockHeader>();
    if (numbers.length === 0) return out;
    const hs = await this.rpc(() => getHeaders(this.client, numbers, { required }));
    for (const h of hs) if (h) out.set(h.number, h);
    return out;
  }

  private getLogs(
    filter: LogFilter,
    from: number,
    to: number,
    onRefused?: () => void,
  ): Promise<IndexerLog[]> {
    return getLogsAdaptive(this.logsClient, filter, from, to, {
      retries: 6,
      signal: this.abort.signal,
      onRetry: ({ attempt, kind, error }) => {
        this.metrics.rpcErrors.inc({ kind });
        this.log.warn(
          { attempt, kind, from, to, err: describeRpcError(error) },
          'eth_getLogs failed; retrying',
        );
      },
      onSplit: ({ from: f, to: t, reason }) => {
        this.metrics.rangeSplits.inc();
        this.metrics.rpcErrors.inc({ kind: 'range' });
        this.ranges.refused(f, t);
        onRefused?.();
        this.log.info({ from: f, to: t, reason }, 'log range refused; splitting');
      },
    });
  }

  // ---------------------------------------------------------------- main loop

  /** Resolves when the checkpoint reaches `block`. */
  waitFor(block: number): Promise<void> {
    if (this.cursor.number >= block) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ block, resolve }));
  }

  private advanced(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (this.cursor.number >= w.block) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  /** The end block is checkpointed (a reorg found later would move the cursor back below it). */
  private get atEnd(): boolean {
    return this.o.endBlock !== undefined && this.cursor.number >= this.o.endBlock;
  }

  /**
   * Runs until stopped (resolves), until the end block is checkpointed (resolves, `ended`), or
   * halted (rejects with an IndexerHaltError).
   */
  async run(): Promise<void> {
    let failures = 0;
    /** When the current streak of failed steps began. */
    let failingSince = 0;
    // Before the first step the kept blocks are checked for a reorg; after a failed step the
    // state is reloaded from the checkpoint and checked again. Both inside the loop: a read that
    // fails there (the node refusing one call) is retried like any step, under the same give-up.
    let reload = false;
    let check = true;
    while (!this.stopping) {
      try {
        if (reload) {
          // Processing may have moved in-memory state past the checkpoint: start again from it.
          await this.load();
          reload = false;
        }
        if (check) {
          await this.checkReorg();
          check = false;
        }
        const seen = this.heads.heads;
        const progressed = await this.step();
        failures = 0;
        // A step that found nothing new has just checked that the checkpointed tip is still
        // canonical (a reorg there moves the cursor back below the end block: index again).
        if (!progressed && this.atEnd) {
          this.ended = true;
          return;
        }
        // The next head wakes it when a WebSocket announces heads; the poll interval is the floor.
        if (!progressed) await this.heads.wait(this.o.pollIntervalMs, this.abort.signal, seen);
      } catch (err) {
        if (err instanceof IndexerHaltError) throw err;
        if (this.stopping) break;
        if (failures++ === 0) failingSince = Date.now();
        const kind = err instanceof InconsistentRangeError ? 'inconsistent' : classifyRpcError(err);
        if (err instanceof InconsistentRangeError) this.metrics.inconsistentRanges.inc();
        else this.metrics.rpcErrors.inc({ kind });
        this.log.error({ err, failures, kind }, 'indexing step failed; reloading state from the checkpoint');
        // Gives up only on a lasting failure: a Kafka leader election or a node restart under
        // load can fail a dozen steps in a row and still pass within a minute or two.
        if (failures >= 8 && Date.now() - failingSince >= this.o.giveUpAfterMs)
          throw new IndexerHaltError(
            `indexer gave up after ${failures} failed attempts over ${Math.round((Date.now() - failingSince) / 1000)} s: ${(err as Error).message}`,
          );
        await sleep(Math.min(10_000, 200 * 2 ** failures), this.abort.signal);
        await this.ensurePublisher().catch((e: unknown) =>
          this.log.error({ err: e }, 'could not start a publisher thread; retrying at the next failure'),
        );
        reload = true;
        check = true;
      }
    }
  }

  /** One poll: process what is new (true) or check the tip for a reorg (false). */
  private async step(): Promise<boolean> {
    this.head = await this.rpc(() => getHeadNumber(this.client));
    this.metrics.headBlock.set(this.head);
    // Never past the confirmed head, nor past the end block.
    const confirmed = this.head - this.o.confirmations;
    const target = this.o.endBlock === undefined ? confirmed : Math.min(confirmed, this.o.endBlock);
    if (target <= this.cursor.number) {
      // Nothing new: the tip may still have been replaced (anvil_reorg keeps the height).
      if (this.cursor.hash && this.blocks.has(this.cursor.number)) {
        const h = (await this.headers([this.cursor.number])).get(this.cursor.number);
        if (!h || h.hash !== this.cursor.hash) await this.checkReorg();
      }
      return false;
    }
    const span = this.o.maxBlockRange * this.o.concurrency * 8;
    const to = Math.min(target, this.cursor.number + span);
    try {
      await this.runSegment(this.cursor.number + 1, to, target);
    } catch (err) {
      if (!(err instanceof ReorgDetected)) throw err;
      this.log.warn({ cursor: this.cursor, reason: err.message }, 'reorg detected');
      await this.checkReorg();
    }
    return true;
  }

  // ---------------------------------------------------------------- segments and chunks

  private async runSegment(from: number, to: number, target: number): Promise<void> {
    const t0 = performance.now();
    const seg = await this.discover(from, to, target);
    this.log.debug(
      { from, to, ms: Math.round(performance.now() - t0), vaults: seg.pendingVaults.size },
      'segment discovered',
    );
    const inFlight: { from: number; to: number; p: Promise<FetchedChunk> }[] = [];
    let next = from;
    const dispatch = () => {
      while (next <= to && this.ranges.mayDispatch(inFlight, this.o.concurrency)) {
        const f = next;
        const t = Math.min(to, f + this.ranges.chunkSize - 1);
        next = t + 1;
        const p = this.fetchChunk(seg, f, t);
        p.catch(() => {}); // observed when its turn comes
        inFlight.push({ from: f, to: t, p });
      }
    };
    // Write-ahead, publish and checkpoint of neighbouring batches overlap (see BatchPipeline), and
    // preparing the next batch overlaps all of them.
    const pipeline = new BatchPipeline<Batch>({
      save: (b) => this.saveAhead(b),
      publish: (b) => this.publishBatch(b),
      checkpoint: (b) => this.checkpointBatch(b),
    });
    this.tip = { ...this.cursor };
    try {
      dispatch();
      while (inFlight.length > 0 && !this.stopping) {
        const head = inFlight.shift()!;
        const w0 = performance.now();
        const chunk = await head.p;
        const waited = performance.now() - w0;
        this.ranges.adapt(chunk);
        dispatch();
        const p0 = performance.now();
        const batch = await this.prepareChunk(seg, chunk);
        const prepMs = performance.now() - p0;
        await pipeline.push(batch);
        this.log.debug(
          {
            from: chunk.from,
            to: chunk.to,
            logs: chunk.logs.length,
            waitMs: Math.round(waited),
            prepareMs: Math.round(prepMs),
            next: this.ranges.chunkSize,
          },
          'chunk prepared',
        );
      }
      await pipeline.drain();
    } finally {
      await Promise.allSettled([pipeline.settled(), ...inFlight.map((c) => c.p)]);
    }
  }

  /** Completing eth_getLogs answers a node behind the head left short (sync/bloom.ts). */
  private get shortAnswers(): ShortAnswers {
    return {
      byHash: (f, hash) => this.rpc(() => getLogsByBlockHash(this.logsClient, f, hash)),
      log: this.log,
      onShort: () => this.metrics.inconsistentRanges.inc(),
    };
  }
  private get factoryFilter(): LogFilter {
    return { address: [this.o.factory], topic0: FACTORY_TOPICS };
  }

  /** The factory's logs over [from, to], completed by the blooms where the range reaches into the kept window. */
  private async factoryLogs(from: number, to: number, target: number): Promise<IndexerLog[]> {
    const logs = await this.getLogs(this.factoryFilter, from, to);
    const check = Math.max(from, target - this.o.reorgWindow + 1);
    if (check > to) return logs;
    const headers = await this.headers(
      Array.from({ length: to - check + 1 }, (_, i) => check + i),
      true,
    );
    return completeByBloom(this.factoryFilter, logs, headers, check, to, this.shortAnswers);
  }

  /** Factory logs of the segment: the vaults it creates, their tokens and pools, feed changes. */
  private async discover(from: number, to: number, target: number): Promise<Segment> {
    const factoryLogs = await this.factoryLogs(from, to, target);
    return planSegment(
      {
        registry: this.registry,
        watch: this.watch,
        snapshots: this.snapshots,
        addressFilterLimit: this.o.addressFilterLimit,
        badLog: (log, reason) => this.badLog(log, reason, from, to),
        rewardTokens: (vaults) => this.rpc(() => readVaultRewardTokens(this.client, vaults)),
      },
      factoryLogs,
      from,
      to,
      target,
    );
  }

  private async fetchChunk(seg: Segment, from: number, to: number): Promise<FetchedChunk> {
    for (let attempt = 0; ; attempt++) {
      let split = false;
      const lists = await Promise.all(
        seg.filters.map((f) =>
          this.getLogs(f, from, to, () => {
            split = true;
          }),
        ),
      );
      let logs: IndexerLog[] = [];
      for (const l of seg.factoryLogs) {
        const n = Number(l.blockNumber);
        if (n >= from && n <= to) logs.push(l);
      }
      for (const list of lists) for (const l of list) logs.push(l);
      logs.sort((a, b) => Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!);
      // A transfer between two vaults answers two filters (to a vault, from a vault): once.
      logs = uniqueLogs(logs);

      // Headers: every block of the kept window (parent-hash chain), the last block (checkpoint
      // hash), and any block whose logs came without a timestamp.
      const want = new Set<number>([to]);
      const windowStart = seg.target - this.o.reorgWindow + 1;
      for (let b = Math.max(from, windowStart); b <= to; b++) want.add(b);
      for (const l of logs) if (l.blockTimestamp === null) want.add(Number(l.blockNumber));
      const headers = await this.headers(
        [...want].sort((a, b) => a - b),
        true,
      );
      const short = await missingChunkLogs(
        { from, to, filters: seg.filters, lists },
        { filter: this.factoryFilter, logs: seg.factoryLogs },
        headers,
        this.shortAnswers,
      );
      if (short.length > 0) {
        for (const l of short) logs.push(l);
        logs.sort((a, b) => Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!);
        logs = uniqueLogs(logs);
      }

      const problem = checkConsistency(logs, headers, from, to);
      const decoded = problem
        ? null
        : decodeAll(
            logs,
            this.o.factory,
            (a) => this.registry.get(a) !== undefined || seg.pendingVaults.has(a),
          );
      if (!problem && decoded && decoded.failures.length === 0)
        return { from, to, logs, decoded: decoded.map, headers, split };
      if (attempt < 2) {
        if (problem) this.metrics.inconsistentRanges.inc();
        this.log.warn(
          { from, to, attempt, problem, badLogs: decoded?.failures.length },
          'refetching log range',
        );
        continue;
      }
      if (problem) throw new InconsistentRangeError(`range ${from}..${to}: ${problem}`);
      const bad = decoded!.failures[0]!;
      return this.badLog(bad.log, bad.reason, from, to);
    }
  }

  private async badLog(log: IndexerLog, reason: string, from: number, to: number): Promise<never> {
    this.metrics.badLogs.inc();
    const ref = refOf(log);
    this.log.error({ log: ref, reason, range: { from, to } }, 'log does not decode: halting before it');
    await this.store
      .recordBadLog({
        chainId: this.chainId,
        blockNumber: ref.blockNumber ?? -1,
        blockHash: ref.blockHash ?? ZERO_HASH,
        txHash: ref.txHash ?? ZERO_HASH,
        logIndex: ref.logIndex ?? -1,
        address: ref.address,
        topic0: ref.topic0,
        reason,
        log: {
          ...ref,
          topics: log.topics,
          data: log.data,
          transactionIndex: log.transactionIndex,
        },
      })
      .catch((err: unknown) => this.log.error({ err }, 'could not record the bad log'));
    throw new BadLogError(
      `log ${ref.txHash}:${ref.logIndex} of ${ref.address} in block ${ref.blockNumber} (${ref.blockHash}) does not decode: ${reason}. ` +
        `The indexer stopped at checkpoint ${this.cursor.number} and will not publish past it; ` +
        'fix the decoder or the contract list, then restart (see indexer_bad_logs).',
    );
  }

  // ---------------------------------------------------------------- processing

  /** Moves the in-memory state through a chunk and returns what to publish and save. */
  private async prepareChunk(seg: Segment, chunk: FetchedChunk): Promise<Batch> {
    const first = chunk.headers.get(chunk.from);
    if (first && this.tip.hash && first.parentHash !== this.tip.hash) {
      throw new ReorgDetected(
        `block ${chunk.from} parent ${first.parentHash} ≠ hash ${this.tip.hash} of block ${this.tip.number}`,
      );
    }
    const records: VaultRecord[] = [];
    const changed = new Set<Address>();
    const kept: StoredBlock[] = [];
    const windowStart = seg.target - this.o.reorgWindow + 1;

    // Blocks to visit: those with logs, those with snapshots.
    const byBlock = new Map<number, IndexerLog[]>();
    for (const l of chunk.logs) {
      const n = Number(l.blockNumber);
      const list = byBlock.get(n) ?? [];
      byBlock.set(n, list);
      list.push(l);
    }
    for (const b of seg.snapshots.keys())
      if (b >= chunk.from && b <= chunk.to && !byBlock.has(b)) byBlock.set(b, []);
    // The chunk's last block is always walked (its header is at hand): triggers that depend on
    // time alone — a feed passing its heartbeat — fire even when no log arrives.
    if (!byBlock.has(chunk.to)) byBlock.set(chunk.to, []);
    const touchedBy = new Map<number, Set<Address>>();
    for (const b of [...byBlock.keys()].sort((x, y) => x - y)) {
      const logs = byBlock.get(b)!;
      const header = chunk.headers.get(b);
      const hash = (header?.hash ?? logs[0]?.blockHash) as Hash | undefined;
      const ts = header?.timestamp ?? logs[0]?.blockTimestamp ?? null;
      if (!hash || ts === null) {
        // A snapshot-only block without logs: fetch its header (rare).
        const h = (await this.headers([b])).get(b);
        if (!h) throw new InconsistentRangeError(`block ${b} not returned by the node`);
        chunk.headers.set(b, h);
      }
      const blockHash = (hash ?? chunk.headers.get(b)!.hash) as Hash;
      const blockTs = ts ?? chunk.headers.get(b)!.timestamp;
      const out = processBlock(this.walk, {
        block: b,
        blockHash,
        ts: blockTs,
        logs,
        decoded: chunk.decoded,
        pendingVaults: seg.pendingVaults,
        snapshots: seg.snapshots.get(b) ?? [],
      });
      for (const r of out.records) records.push(r);
      for (const v of out.changed) changed.add(v);
      if (out.touched.size > 0) touchedBy.set(b, out.touched);
    }
    const entry = (vault: Address) => {
      const v = this.registry.get(vault) ?? this.aheadVaults.get(vault);
      if (!v) throw new IndexerHaltError(`record for vault ${vault} unknown to the registry`);
      return v;
    };
    const seqs = assignSeqs(records, (vault) => entry(vault).state);
    this.valuedBlocks += await valuateRecords(records, {
      read: (block, vaults, hash, ts) => this.rpc(() => this.valuator.read(block, vaults, hash, ts)),
      // Positions minted for the vault by someone else are read too (every range seen so far: one
      // the pool holds nothing for at a block reads as nothing there).
      vault: (vault) => {
        const v = entry(vault);
        const ranges = v.state.received;
        return ranges ? { ...v, ranges } : v;
      },
      concurrency: this.o.concurrency,
    });
    this.metrics.valuationCallsMade(this.valuator.calls);
    for (let b = Math.max(chunk.from, windowStart); b <= chunk.to; b++) {
      const h = chunk.headers.get(b)!;
      kept.push({
        blockNumber: b,
        blockHash: h.hash,
        parentHash: h.parentHash,
        blockTimestamp: h.timestamp,
        vaults: [...(touchedBy.get(b) ?? [])].sort(),
      });
    }
    const last = chunk.headers.get(chunk.to)!;

    const vaults = [...changed].map((v) => this.stored(this.registry.get(v)!));
    this.tip = { number: chunk.to, hash: last.hash };
    return {
      records,
      kept,
      vaults,
      born: vaults.filter((v) => v.createdBlock >= chunk.from && v.createdBlock <= chunk.to),
      seqs,
      checkpoint: { number: chunk.to, hash: last.hash },
      timing: { saveMs: 0, publishMs: 0 },
    };
  }

  /** Stage 1 of a batch: write-ahead of its kept blocks and the vaults it creates. */
  private async saveAhead(batch: Batch): Promise<void> {
    const { kept, born, seqs } = batch;
    const t0 = performance.now();
    if (kept.length > 0 || born.length > 0 || seqs.length > 0) {
      await this.store.saveBlocks(this.chainId, kept, born, seqs);
      for (const k of kept) this.blocks.set(k.blockNumber, k);
    }
    batch.timing.saveMs = performance.now() - t0;
  }

  /** Stage 2: publish the records and wait for Kafka's ack. */
  private async publishBatch(batch: Batch): Promise<void> {
    const { records } = batch;
    const t0 = performance.now();
    if (records.length > 0) {
      await (await this.publisher).publish(records);
      for (const r of records) this.metrics.recordsPublished.inc({ type: r.type });
      this.recordsPublished += records.length;
    }
    batch.timing.publishMs = performance.now() - t0;
  }

  /** Stage 3, after the ack: checkpoint with the vault states, slide the kept window. */
  private async checkpointBatch(batch: Batch): Promise<void> {
    const { records, vaults, checkpoint } = batch;
    const t0 = performance.now();
    const pruneBelow = checkpoint.number - this.o.reorgWindow + 1;
    await this.store.commit(this.chainId, {
      checkpoint: { blockNumber: checkpoint.number, blockHash: checkpoint.hash },
      topic: this.o.kafka.topic,
      vaults,
      pruneBelow,
    });
    for (const n of this.blocks.keys()) if (n < pruneBelow) this.blocks.delete(n);
    await this.compactSeqs(pruneBelow);
    this.cursor = { number: checkpoint.number, hash: checkpoint.hash };
    this.metrics.batches.inc();
    this.log.debug(
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
    this.metrics.checkpointBlock.set(checkpoint.number);
    this.metrics.vaults.set(this.registry.size);
    this.advanced();
  }

  /**
   * Folds the sequence rows below the kept window into spans (the store's compactSeqs): what
   * `republish` needs of them, no reorg reaching below the window. Once the window slid
   * `everyBlocks` since the last run, and again at the next batch while rows are left.
   */
  private async compactSeqs(below: number): Promise<void> {
    const c = this.o.seqCompaction;
    if (below <= 0 || (this.compactedBelow >= 0 && below - this.compactedBelow < c.everyBlocks)) return;
    const t0 = performance.now();
    let done: SeqCompaction;
    try {
      done = await this.store.compactSeqs(this.chainId, below, {
        maxRows: c.maxRows,
        limits: { maxBlocks: c.maxSpanBlocks, maxMarks: c.maxSpanMarks },
      });
    } catch (err) {
      // Housekeeping: nothing published depends on it. The next batch tries again.
      this.log.warn({ err, below }, 'sequence rows not compacted (tried again at the next batch)');
      this.compactedBelow = -1;
      return;
    }
    // Rows left below the block: run again at the next batch.
    this.compactedBelow = done.more ? -1 : below;
    if (done.rows > 0)
      this.log.debug(
        {
          below,
          rows: done.rows,
          spans: done.spans,
          more: done.more,
          ms: Math.round(performance.now() - t0),
        },
        'sequence rows compacted',
      );
  }

  /** A copy of the vault for saving (its live state keeps moving while the batch publishes). */
  private stored(v: VaultEntry): StoredIndexerVault {
    return {
      vault: v.vault,
      createdBlock: v.createdBlock,
      token0: v.token0,
      token1: v.token1,
      pool: v.pool,
      rewardToken: v.rewardToken,
      state: copyMarkState(v.state),
    };
  }

  // ---------------------------------------------------------------- reorgs

  /** Repairs a reorg found among the kept blocks (sync/rewind.ts). */
  checkReorg(): Promise<void> {
    const e = this;
    return rewindOnReorg({
      chainId: e.chainId,
      // Read when asked: a check on restart comes before any step has read the head.
      latest: async () => {
        e.head = await e.rpc(() => getHeadNumber(e.client));
        return e.head;
      },
      reorgWindow: e.o.reorgWindow,
      topic: e.o.kafka.topic,
      get cursor() {
        return e.cursor;
      },
      set cursor(c) {
        e.cursor = c;
      },
      get watch() {
        return e.watch;
      },
      set watch(t) {
        e.watch = t;
      },
      blocks: e.blocks,
      registry: e.registry,
      aheadVaults: e.aheadVaults,
      store: e.store,
      log: e.log,
      metrics: e.metrics,
      headers: (numbers) => e.headers(numbers),
      watchAt: (block, vaults, lenient) => e.snapshots.watchAt(block, vaults, lenient),
      value: async (block, v, hash) => (await e.rpc(() => e.valuator.read(block, [v], hash))).get(v.vault)!,
      positionsAt: (vault, block) => e.rpc(() => readVaultPositions(e.client, vault, block)),
      publish: async (records) => {
        await (await e.publisher).publish(records);
        for (const r of records) e.metrics.recordsPublished.inc({ type: r.type });
        e.recordsPublished += records.length;
      },
      stored: (v) => e.stored(v),
    });
  }
}
