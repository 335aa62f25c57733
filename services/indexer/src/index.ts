import type { Server } from 'node:http';
import { type Context, createLogger, securityOf, serveMetrics } from '@vault-yield/common';
import { type IndexerConfig, indexerConfigSchema } from './config.js';
import { createIndexerEngine, type IndexerStatus } from './indexer.js';
import { createIndexerMetrics, type IndexerMetrics } from './metrics.js';

export {
  type IndexerConfig,
  type IndexerEnv,
  indexerConfigFromEnv,
  indexerConfigSchema,
  indexerEnvSchema,
  loadIndexerEnv,
  type ResolvedIndexerConfig,
} from './config.js';
export {
  BadLogError,
  InconsistentRangeError,
  IndexerHaltError,
  ReorgTooDeepError,
} from './errors.js';
export { type FollowingIndexer, followLiveIndexer, type IndexerFollowOptions } from './follow.js';
export type { IndexerStatus } from './indexer.js';
export {
  type ChainCounter,
  type ChainGauge,
  type ChainHistogram,
  createIndexerMetrics,
  type IndexerMetrics,
} from './metrics.js';
export { type PriceReading, PriceWatch, type ValuedSet } from './price-watch.js';
export {
  type RederiveInput,
  RepublishError,
  type RepublishOptions,
  type RepublishResult,
  republishVault,
} from './republish.js';
export {
  emptyMarkState,
  flipped,
  type MarkCadence,
  rangeFlags,
  shouldMark,
  type VaultMarkState,
} from './vaults.js';

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

/**
 * The indexer of `input`, handed the process's context (its logger, registry and Kafka security);
 * without one (a test), its own logger (`input.logger`) and registry.
 */
export function createIndexer(input: IndexerConfig, ctx?: Context): Indexer {
  const parsed = indexerConfigSchema.safeParse(input);
  if (!parsed.success)
    throw new RangeError(
      `invalid indexer config: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const config = parsed.data;
  const logger = ctx?.log ?? config.logger ?? createLogger({ name: 'indexer' });
  // Every Kafka client of the indexer (the publisher thread's too) connects with these.
  const kafka = { ...config.kafka, security: config.kafka.security ?? securityOf(ctx?.kafka) };
  const metrics = createIndexerMetrics(ctx?.metrics ?? true, config.chainId);
  const engine = createIndexerEngine({ ...config, kafka, logger, metrics });
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
      if (config.metricsPort !== undefined)
        server = await serveMetrics(metrics.registry, config.metricsPort, config.metricsHost);
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
        { chainId: engine.state.chainId, checkpoint: engine.state.cursor, endBlock: config.endBlock },
        'indexer starting',
      );
      running = engine.run().then(
        async () => {
          // The end block is checkpointed: nothing more to do, let the process exit.
          if (engine.state.ended) {
            logger.info({ checkpoint: engine.state.cursor }, 'end block checkpointed; indexer finished');
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
    status: () => engine.status(),
  };
}
