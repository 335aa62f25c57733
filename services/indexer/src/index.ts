import type { Server } from 'node:http';
import { createLogger, type Logger } from '@vault-yield/common';
import type { IndexerEnv } from './config.js';
import { IndexerEngine } from './indexer.js';
import { createIndexerMetrics, type IndexerMetrics, serveMetrics } from './metrics.js';
import type { MarkCadence } from './vaults.js';

export { type IndexerEnv, indexerEnvSchema, loadIndexerEnv } from './config.js';
export {
  BadLogError,
  ContextError,
  InconsistentRangeError,
  IndexerHaltError,
  ReorgTooDeepError,
} from './errors.js';
export { type MarketSnapshot, MarketTracker, type ValuedSet } from './market.js';
export { createIndexerMetrics, type IndexerMetrics } from './metrics.js';
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
  kafka: { brokers: readonly string[]; topic?: string; partitions?: number };
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
}

export interface IndexerStatus {
  chainId: number;
  checkpoint: { blockNumber: number; blockHash: string | null };
  head: number;
  vaults: number;
  recordsPublished: number;
  rpcCalls: number;
  rpcHttpRequests: number;
}

export interface Indexer {
  /** Connects, loads the checkpoint (repairing a reorg found there), then indexes in the background. */
  start(): Promise<void>;
  /** Finishes the batch in flight, closes Kafka and Postgres. */
  stop(): Promise<void>;
  /** Settles when the indexer stops: resolves on stop(), rejects when it halts (bad log, deep reorg…). */
  readonly done: Promise<void>;
  /** Resolves once the checkpoint reaches `blockNumber`; rejects if the indexer halts first. */
  waitFor(blockNumber: number): Promise<void>;
  status(): IndexerStatus;
  readonly metrics: IndexerMetrics;
}

export function createIndexer(config: IndexerConfig): Indexer {
  const logger = config.logger ?? createLogger({ name: 'indexer' });
  const metrics = createIndexerMetrics();
  const engine = new IndexerEngine({
    rpcUrl: config.rpcUrl,
    chainId: config.chainId,
    factory: config.factory.toLowerCase() as `0x${string}`,
    startBlock: config.startBlock,
    confirmations: config.confirmations ?? 0,
    brokers: config.kafka.brokers,
    topic: config.kafka.topic ?? 'vault-records',
    partitions: config.kafka.partitions ?? 12,
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

  return {
    metrics,
    done,
    async start() {
      if (config.metricsPort !== undefined) server = await serveMetrics(metrics, config.metricsPort);
      try {
        await engine.open();
        await engine.load();
      } catch (err) {
        // Nothing may keep running (the publisher thread, the pool) after a failed start.
        await engine.close();
        throw err;
      }
      logger.info({ chainId: engine.chainId, checkpoint: engine.cursor }, 'indexer starting');
      running = engine.run().then(
        () => resolveDone(),
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
      await engine.close();
      await new Promise<void>((res) => (server ? server.close(() => res()) : res()));
    },
    waitFor(blockNumber) {
      if (halted) return Promise.reject(halted);
      return Promise.race([engine.waitFor(blockNumber), done.then(() => engine.waitFor(blockNumber))]);
    },
    status() {
      return {
        chainId: engine.chainId,
        checkpoint: { blockNumber: engine.cursor.number, blockHash: engine.cursor.hash },
        head: engine.head,
        vaults: engine.registry.size,
        recordsPublished: engine.recordsPublished,
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
    chainId: env.CHAIN_ID,
    factory: env.FACTORY_ADDRESS,
    startBlock: env.START_BLOCK,
    confirmations: env.CONFIRMATIONS,
    kafka: { brokers: env.KAFKA_BROKERS, topic: env.KAFKA_TOPIC, partitions: env.KAFKA_PARTITIONS },
    databaseUrl: env.DATABASE_URL,
    schema: env.PROJECTION_SCHEMA,
    pollIntervalMs: env.POLL_INTERVAL_MS,
    maxBlockRange: env.MAX_BLOCK_RANGE,
    concurrency: env.CONCURRENCY,
    reorgWindow: env.REORG_WINDOW,
    mark: { intervalBlocks: env.MARK_INTERVAL_BLOCKS, minIntervalMs: env.MARK_MIN_INTERVAL_MS },
    metricsPort: env.METRICS_PORT,
    logger,
  };
}
