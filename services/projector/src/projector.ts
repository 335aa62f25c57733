import type { Server } from 'node:http';
import { type Context, type Logger, securityOf, serveMetrics } from '@vault-yield/common';
import { FOLD_VERSION } from '@vault-yield/domain';
import { type BatchConsumer, createLogAdmin, type LogBatch, type LogSecurity } from '@vault-yield/log';
import {
  checkRoleSettings,
  createPgPool,
  createProjectionStore,
  migrate,
  type Pool,
  type ProjectionStore,
  type ProjectionTx,
  projectionFoldVersion,
} from '@vault-yield/store';
import { applyResult } from './apply.js';
import { createStateCache, type StateCache } from './cache.js';
import { type ProjectorConfig, projectorConfigSchema, type ResolvedProjectorConfig } from './config.js';
import { createProjectorMetrics, type ProjectorMetrics } from './metrics.js';
import { createVaultProjection, type VaultBatchOut } from './projection.js';
import { type Decoded, decode } from './rows.js';
import { type Applied, createRunnerConsumer } from './runner/index.js';

export interface Projector {
  start(): Promise<void>;
  /** Finishes the batches in flight (they commit or roll back whole), leaves the group, closes pools. */
  stop(): Promise<void>;
  metrics: ProjectorMetrics;
  /** Partitions this instance currently owns. */
  assignment(): number[];
  /**
   * Resolves once the stored offsets of every partition of the topic reach the topic's current
   * high watermarks (for tests, the bench and `/ready`-style checks).
   */
  caughtUp(opts?: { timeoutMs?: number; pollMs?: number }): Promise<void>;
}

/**
 * The projector: a consumer-group member that folds the event log into the projection schema,
 * one Postgres transaction per partition batch, offsets stored in that transaction. Run any
 * number of instances with the same group; partitions are shared between them.
 */
export function createProjector(input: ProjectorConfig, ctx?: Context): Projector {
  const parsed = projectorConfigSchema.parse(input);
  // The process's logger and Kafka SASL/TLS when handed its context (the config's own first).
  const config: ResolvedProjectorConfig = {
    ...parsed,
    logger: ctx?.log ?? parsed.logger,
    kafka: { ...parsed.kafka, security: parsed.kafka.security ?? securityOf(ctx?.kafka) },
  };
  const { kafka, schema, logger: log } = config;
  const pool: Pool = createPgPool({
    url: config.databaseUrl,
    schema,
    applicationName: 'vault-yield-projector',
    max: config.pgPoolMax,
    synchronousCommit: config.synchronousCommit,
    pooling: config.pooling,
  });
  const store = createProjectionStore(pool);
  const metrics = createProjectorMetrics(ctx?.metrics ?? true);
  const cache = createStateCache(config.stateCacheVaults);
  const { topic, consumerGroup: groupId } = kafka;
  // SASL/TLS of the config or the context (none: plaintext, a test or dev broker).
  const security = kafka.security ?? {};
  let consumer: BatchConsumer | null = null;
  let server: Server | null = null;
  let heartbeat: { timer: NodeJS.Timeout; pending: Promise<void> } | null = null;

  /**
   * The heartbeat marks one offsets row as written: that of this instance's lowest partition
   * (instances own disjoint partitions, so theirs never wait on each other; retire reads the
   * schema's latest write).
   */
  const beat = () => {
    const owned = consumer?.assignment() ?? [];
    if (!heartbeat || owned.length === 0) return;
    heartbeat.pending = store
      .heartbeat(groupId, topic, Math.min(...owned))
      .catch((err: unknown) => log.warn({ err }, 'heartbeat failed (retried at the next beat)'));
  };

  return {
    metrics,
    assignment: () => consumer?.assignment() ?? [],
    async start() {
      // Behind a transaction-mode pooler the role's search_path stands in for the connect option.
      if (config.pooling === 'transaction') await checkRoleSettings(pool, { schema });
      if (config.migrate) await migrate(pool, schema);
      // Figures folded by another fold version stay as they are until a rebuild: say so at start.
      const folded = await projectionFoldVersion(pool, schema);
      if (folded !== FOLD_VERSION)
        log.warn(
          { schema, foldVersion: folded, buildFoldVersion: FOLD_VERSION },
          'projection folded by another fold version: run `vault-yield rebuild` (figures of vaults with several records in one block differ)',
        );
      if (config.metricsPort !== undefined)
        server = await serveMetrics(metrics.registry, config.metricsPort, config.metricsHost);
      consumer = vaultConsumer(config, { store, cache, metrics });
      await consumer.start();
      const every = config.heartbeatMs;
      if (every > 0) heartbeat = { timer: setInterval(beat, every).unref(), pending: Promise.resolve() };
      log.info({ topic, groupId, schema }, 'projector started');
    },
    async stop() {
      if (heartbeat) {
        clearInterval(heartbeat.timer);
        await heartbeat.pending;
        heartbeat = null;
      }
      const c = consumer;
      consumer = null;
      if (c) await c.stop();
      if (server) await new Promise<void>((resolve) => server?.close(() => resolve()));
      server = null;
      await pool.end();
      log.info('projector stopped');
    },
    caughtUp: (opts) => waitCaughtUp({ store, kafka, security, groupId, topic }, opts),
  };
}

/** What the projector does with a committed batch: its partition's states, metrics and logs. */
function reportBatch(
  {
    cache,
    metrics,
    log,
    onBatch,
  }: Pick<ResolvedProjectorConfig, 'onBatch'> & {
    cache: StateCache;
    metrics: ProjectorMetrics;
    log: Logger;
  },
  batch: LogBatch<Decoded>,
  run: Applied<VaultBatchOut>,
  seconds: number,
): void {
  const result = applyResult(run);
  const partition = batch.partition;
  cache.commit(partition, `${result.nextOffset}@${result.epoch}`, result.vaults);
  const { stats } = result;
  metrics.batchSeconds.observe(seconds);
  metrics.batches.inc();
  metrics.applied.inc(stats.applied);
  metrics.duplicates.inc(stats.duplicates);
  metrics.reverts.inc(stats.reverts);
  metrics.released.inc(stats.released);
  for (const [feed, n] of stats.stale) metrics.stalePrices.inc({ feed }, n);
  metrics.unexplainedOutflows.inc(stats.unexplainedOutflows);
  for (const [kind, n] of Object.entries(stats.deadLetters)) if (n > 0) metrics.deadLetters.inc({ kind }, n);
  if (result.letters.length > 0) {
    // Loud: each leaves its vault behind (snapshot `behind`, /ready, `vault-yield status`).
    log.error(
      { partition, ...stats.deadLetters, letters: result.letters },
      'records dead-lettered: `vault-yield dead-letters list`, then `retry` after a fix',
    );
  }
  metrics.lag.set(
    { partition: String(batch.partition) },
    Number(BigInt(batch.highWatermark) - BigInt(batch.commit.nextOffset)),
  );
  log.debug(
    {
      partition: batch.partition,
      next: batch.commit.nextOffset,
      records: batch.messages.length,
      seconds,
      ...stats,
    },
    'batch committed',
  );
  onBatch?.(batch.partition, stats);
}

/** Resolves once the group's stored offsets reach the topic's high watermarks (see Projector.caughtUp). */
async function waitCaughtUp(
  {
    store,
    kafka,
    security,
    groupId,
    topic,
  }: {
    store: ProjectionStore;
    kafka: ResolvedProjectorConfig['kafka'];
    security: LogSecurity;
    groupId: string;
    topic: string;
  },
  { timeoutMs = 120_000, pollMs = 200 }: { timeoutMs?: number; pollMs?: number } = {},
): Promise<void> {
  const admin = await createLogAdmin({
    brokers: [...kafka.brokers],
    ...security,
    clientId: 'projector-caught-up',
  });
  try {
    const high = await admin.offsets(topic);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const stored = await store.storedOffsets(
        groupId,
        topic,
        high.map((h) => h.partition),
      );
      if (high.every((h) => BigInt(stored.get(h.partition) ?? '0') >= BigInt(h.high))) return;
      if (Date.now() > deadline) throw new Error(`projector not caught up after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, pollMs));
    }
  } finally {
    await admin.close();
  }
}

/** The projector's consumer: the runner's consume loop feeding the vault projection. */
function vaultConsumer(
  config: ResolvedProjectorConfig,
  { store, cache, metrics }: { store: ProjectionStore; cache: StateCache; metrics: ProjectorMetrics },
): BatchConsumer {
  const { kafka, logger: log, concurrency, maxBatchBytes } = config;
  const { topic, consumerGroup: groupId } = kafka;
  // SASL/TLS of the config (none: what the process default says).
  const security = kafka.security ?? {};
  return createRunnerConsumer<Decoded, VaultBatchOut, ProjectionTx>({
    brokers: [...kafka.brokers],
    ...security,
    clientId: kafka.clientId,
    logger: log,
    groupId: kafka.groupId ?? groupId,
    offsetsGroupId: groupId,
    topic,
    decode,
    sessionTimeoutMs: kafka.sessionTimeoutMs,
    store,
    // Ledger rows go by COPY; a batch that met a record already in the ledger at another
    // position (see ApplyOptions.copyLedger) rolled back whole and is redone with inserts.
    projection: (attempt) => createVaultProjection({ log, cache, copyLedger: attempt === 0 }),
    retry(err, batch) {
      if (!store.isUniqueViolation(err)) return false;
      log.warn(
        { partition: batch.partition },
        'ledger COPY met an existing record; re-applying the batch with inserts',
      );
      cache.drop(batch.partition);
      return true;
    },
    // The commit's outcome is unknown: forget the partition's states (Postgres has the truth).
    onFailed: (batch) => cache.drop(batch.partition),
    onApplied: (batch, run, seconds) =>
      reportBatch({ cache, metrics, log, onBatch: config.onBatch }, batch, run, seconds),
    partitionsConsumedConcurrently: concurrency,
    maxBytesPerPartition: maxBatchBytes,
    // One fetch answers for every assigned partition: room for four full batches, so a fetch
    // over several partitions does not cut them short (fewer records per batch costs more
    // per record: a vault's snapshot is written once per batch).
    maxBytes: 4 * maxBatchBytes,
    onReplace: (reason) => metrics.consumerReplacements.inc({ reason }),
  });
}
