import type { Server } from 'node:http';
import { createLogger, kafkaSecurity, type Logger } from '@vault-yield/common';
import { type LogSecurity, setDefaultLogSecurity } from '@vault-yield/log';
import type { IndexerEnv } from './config.js';
import { IndexerEngine } from './indexer.js';
import { createIndexerMetrics, type IndexerMetrics, serveMetrics } from './metrics.js';
import type { MarkCadence } from './vaults.js';

export { type IndexerEnv, indexerEnvSchema, loadIndexerEnv } from './config.js';
export {
  BadLogError,
  InconsistentRangeError,
  IndexerHaltError,
  ReorgTooDeepError,
} from './errors.js';
export { createIndexerMetrics, type IndexerMetrics } from './metrics.js';
export { type ValuationSnapshot, ValuationTracker, type ValuedSet } from './valuation.js';
export {
  emptyMarkState,
  flipped,
  type MarkCadence,
  rangeFlags,
  shouldMark,
  type VaultMarkState,
} from './vaults.js';

export interface IndexerConfig {
  rpcUrl: string;
  /** Read from the node when omitted. */
  chainId?: number;
  factory: `0x${string}`;
  /** Default: the factory's deploymentBlock. Must not be above the factory's first vault. */
  startBlock?: number;
  /** Blocks behind the head the indexer stays (default 0). */
  confirmations?: number;
  /**
   * Last block to index. The indexer publishes and checkpoints up to and including it (waiting
   * until it is `confirmations` deep when it is not yet), checks once more that the checkpointed
   * block is still canonical, closes its connections and resolves `done`, instead of following
   * the head. Must be ≥ the start block and ≥ a stored checkpoint (start() refuses otherwise).
   */
  endBlock?: number;
  /**
   * `replicationFactor` of the topic the indexer creates (unset: 3, or 1 on a single broker).
   * `security`: SASL/TLS for every Kafka client of this process (the publisher thread included);
   * unset leaves what `setDefaultLogSecurity` set (plaintext by default).
   */
  kafka: {
    brokers: readonly string[];
    topic?: string;
    partitions?: number;
    replicationFactor?: number;
    security?: LogSecurity;
  };
  /** Time-out of one RPC request (default 30 s). */
  rpcTimeoutMs?: number;
  databaseUrl: string;
  /** Postgres schema holding indexer_checkpoint & co (default vault_yield). */
  schema?: string;
  pollIntervalMs?: number;
  /** Largest getLogs range (blocks); the range adapts below it. Default 10 000. */
  maxBlockRange?: number;
  /** getLogs ranges fetched at once (default 4). */
  concurrency?: number;
  /** Block hashes kept for reorg detection (default 128). */
  reorgWindow?: number;
  /** Mark cadence: at most one mark per vault per N blocks / M ms of block time (flips excepted). */
  mark?: Partial<MarkCadence>;
  /** Serve /metrics on this port. */
  metricsPort?: number;
  logger?: Logger;
  /** Above this many watched addresses, vault logs are fetched by topic and filtered here (default 1000). */
  addressFilterLimit?: number;
  /**
   * Price feed heartbeats in seconds: a price whose feed's `updatedAt` is older than this at the
   * record's block is named in the snapshot's `stalePrices`. Per feed address; else `default`
   * (3600 s, the common Chainlink heartbeat of volatile USD feeds; stablecoin feeds often use 86400).
   */
  heartbeats?: { default?: number; byFeed?: Readonly<Record<`0x${string}`, number>> };
}

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
  /** eth_calls made to read holdings and prices at record blocks (deployless multicalls). */
  valuationCalls: number;
  /** Blocks with records, each valued with one read (round trip). */
  valuedBlocks: number;
  rpcCalls: number;
  rpcHttpRequests: number;
}

export interface Indexer {
  /**
   * Connects, loads the checkpoint (repairing a reorg found there), then indexes in the background.
   * Rejects with an IndexerHaltError, before the topic is created or anything published, when the
   * checkpoint is of another topic than `kafka.topic` (one without a topic is adopted).
   */
  start(): Promise<void>;
  /** Finishes the batch in flight, closes Kafka and Postgres. */
  stop(): Promise<void>;
  /**
   * Settles when the indexer stops: resolves on stop() or, with an end block, once that block is
   * checkpointed (status().ended; Kafka and Postgres are closed by then); rejects when it halts
   * (bad log, deep reorg…).
   */
  readonly done: Promise<void>;
  /**
   * Resolves once the checkpoint reaches `blockNumber`; rejects if the indexer halts first, or at
   * once for a block above the end block.
   */
  waitFor(blockNumber: number): Promise<void>;
  status(): IndexerStatus;
  readonly metrics: IndexerMetrics;
}

export function createIndexer(config: IndexerConfig): Indexer {
  if (config.endBlock !== undefined && !(Number.isSafeInteger(config.endBlock) && config.endBlock >= 0))
    throw new RangeError(`endBlock must be a block number, got ${config.endBlock}`);
  const logger = config.logger ?? createLogger({ name: 'indexer' });
  if (config.kafka.security) setDefaultLogSecurity(config.kafka.security);
  const metrics = createIndexerMetrics();
  const engine = new IndexerEngine({
    rpcUrl: config.rpcUrl,
    chainId: config.chainId,
    factory: config.factory.toLowerCase() as `0x${string}`,
    startBlock: config.startBlock,
    confirmations: config.confirmations ?? 0,
    endBlock: config.endBlock,
    brokers: config.kafka.brokers,
    topic: config.kafka.topic ?? 'vault-records',
    partitions: config.kafka.partitions ?? 12,
    replicationFactor: config.kafka.replicationFactor,
    rpcTimeoutMs: config.rpcTimeoutMs,
    databaseUrl: config.databaseUrl,
    schema: config.schema ?? 'vault_yield',
    pollIntervalMs: config.pollIntervalMs ?? 1000,
    maxBlockRange: config.maxBlockRange ?? 10_000,
    concurrency: config.concurrency ?? 4,
    reorgWindow: config.reorgWindow ?? 128,
    cadence: {
      intervalBlocks: config.mark?.intervalBlocks ?? 10,
      minIntervalMs: config.mark?.minIntervalMs ?? 0,
    },
    logger,
    metrics,
    addressFilterLimit: config.addressFilterLimit,
    defaultHeartbeat: config.heartbeats?.default ?? 3600,
    heartbeats: Object.fromEntries(
      Object.entries(config.heartbeats?.byFeed ?? {}).map(([feed, s]) => [feed.toLowerCase(), s]),
    ),
  });
  let server: Server | undefined;
  let resolveDone!: () => void;
  let rejectDone!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolveDone = res;
    rejectDone = rej;
  });
  done.catch(() => {}); // callers that never look at `done` must not crash the process
  let halted: unknown;
  let running: Promise<void> | undefined;
  let released: Promise<void> | undefined;
  /** Closes Kafka, Postgres and the metrics server, once. */
  const release = () =>
    (released ??= (async () => {
      await engine.close();
      await new Promise<void>((res) => (server ? server.close(() => res()) : res()));
    })());

  return {
    metrics,
    done,
    async start() {
      if (config.metricsPort !== undefined) server = await serveMetrics(metrics, config.metricsPort);
      try {
        await engine.open();
        await engine.load();
      } catch (err) {
        // Nothing may keep running (the publisher thread, the pool, the metrics port) after a
        // failed start.
        await release();
        throw err;
      }
      logger.info(
        { chainId: engine.chainId, checkpoint: engine.cursor, endBlock: config.endBlock },
        'indexer starting',
      );
      running = engine.run().then(
        async () => {
          // The end block is checkpointed: nothing more to do, let the process exit.
          if (engine.ended) {
            logger.info({ checkpoint: engine.cursor }, 'end block checkpointed; indexer finished');
            await release().catch((err: unknown) =>
              logger.error({ err }, 'closing after the end block failed'),
            );
          }
          resolveDone();
        },
        (err: unknown) => {
          halted = err;
          logger.fatal({ err }, 'indexer halted');
          rejectDone(err);
        },
      );
    },
    async stop() {
      engine.stop();
      await running;
      await release();
    },
    waitFor(blockNumber) {
      if (halted) return Promise.reject(halted);
      if (config.endBlock !== undefined && blockNumber > config.endBlock)
        return Promise.reject(
          new RangeError(
            `block ${blockNumber} is above the end block ${config.endBlock}: it is never indexed`,
          ),
        );
      return Promise.race([engine.waitFor(blockNumber), done.then(() => engine.waitFor(blockNumber))]);
    },
    status() {
      return {
        chainId: engine.chainId,
        checkpoint: { blockNumber: engine.cursor.number, blockHash: engine.cursor.hash },
        head: engine.head,
        endBlock: config.endBlock ?? null,
        ended: engine.ended,
        vaults: engine.registry.size,
        recordsPublished: engine.recordsPublished,
        bytesPublished: engine.bytesPublished,
        valuationCalls: engine.valuationCalls,
        valuedBlocks: engine.valuedBlocks,
        rpcCalls: engine.rpcStats?.calls ?? 0,
        rpcHttpRequests: engine.rpcStats?.httpRequests ?? 0,
      };
    },
  };
}

/** createIndexer from the validated environment (main.ts and the CLI's dev command). */
export function indexerConfigFromEnv(env: IndexerEnv, logger?: Logger): IndexerConfig {
  return {
    rpcUrl: env.RPC_URL,
    rpcTimeoutMs: env.RPC_TIMEOUT_MS,
    chainId: env.CHAIN_ID,
    factory: env.FACTORY_ADDRESS,
    startBlock: env.START_BLOCK,
    confirmations: env.CONFIRMATIONS,
    endBlock: env.END_BLOCK,
    kafka: {
      brokers: env.KAFKA_BROKERS,
      topic: env.KAFKA_TOPIC,
      partitions: env.KAFKA_PARTITIONS,
      replicationFactor: env.KAFKA_REPLICATION_FACTOR,
      security: kafkaSecurity(env),
    },
    databaseUrl: env.DATABASE_URL,
    schema: env.PROJECTION_SCHEMA,
    pollIntervalMs: env.POLL_INTERVAL_MS,
    maxBlockRange: env.MAX_BLOCK_RANGE,
    concurrency: env.CONCURRENCY,
    reorgWindow: env.REORG_WINDOW,
    mark: { intervalBlocks: env.MARK_INTERVAL_BLOCKS, minIntervalMs: env.MARK_MIN_INTERVAL_MS },
    metricsPort: env.METRICS_PORT,
    heartbeats: { default: env.FEED_HEARTBEAT_SECONDS, byFeed: env.FEED_HEARTBEATS },
    logger,
  };
}
