import type { VaultRecord } from '@vault-yield/domain';
import { createLogAdmin } from '@vault-yield/log';
import { createThreadedPublisher, type RecordPublisher } from '../publisher/index.js';
import type { IndexerState } from '../state.js';
import type { IndexerCommon } from './context.js';
import type { Batch } from './types.js';

/** The publish stage: records to Kafka from the publisher thread, replaced when it dies. */
export interface PublishStage {
  /** Publishes and counts records: resolves once Kafka acknowledged every one. */
  publish(records: readonly VaultRecord[]): Promise<void>;
  /** Stage 2 of a batch (BatchPipeline): its records, timed. */
  publishBatch(batch: Batch): Promise<void>;
  /** A publisher thread that died (or never started) is replaced; unacknowledged batches are republished from the checkpoint. */
  ensure(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the publisher thread at once: it boots (and connects its producer) while the topic is
 * ensured, the state loaded and the first ranges read; the first publish waits for it.
 */
export function createPublishStage(c: IndexerCommon, state: IndexerState): PublishStage {
  let publisher = startPublisher(c, state);
  const publish = async (records: readonly VaultRecord[]) => {
    await (await publisher).publish(records);
    for (const r of records) c.metrics.recordsPublished.inc({ type: r.type });
    state.totals.records += records.length;
  };
  return {
    publish,
    async publishBatch(batch) {
      const { records } = batch;
      const t0 = performance.now();
      if (records.length > 0) await publish(records);
      batch.timing.publishMs = performance.now() - t0;
    },
    async ensure() {
      const current = await publisher.catch(() => undefined);
      if (current && !current.broken) return;
      c.log.warn('publisher thread is gone; starting a new one');
      await current?.close().catch(() => {});
      publisher = startPublisher(c, state);
      await publisher;
    },
    close: () => publisher.then((p) => p.close()).catch(() => {}),
  };
}

function startPublisher(c: IndexerCommon, state: IndexerState): Promise<RecordPublisher> {
  const t0 = performance.now();
  const p = createThreadedPublisher({
    brokers: c.options.kafka.brokers,
    security: c.options.kafka.security ?? {},
    // The indexers of several chains publish to one topic: each producer names its chain (an
    // idempotent producer has no transactional id to fence another; the client id tells them apart
    // in the brokers' logs and quotas).
    clientId: `indexer-${state.chainId}`,
    topic: c.options.kafka.topic,
    logger: c.log,
    encoding: c.options.kafka.encoding,
    onAcked: (_records, bytes) => {
      state.totals.bytes += bytes;
      c.metrics.recordBytes.inc(bytes);
    },
  });
  p.then(
    () => c.log.debug({ ms: Math.round(performance.now() - t0) }, 'publisher thread connected'),
    (err: unknown) => c.log.error({ err }, 'publisher thread failed to start'),
  );
  return p;
}

/** Creates the records topic when it is missing (partitions and replication from the config). */
export async function ensureTopic(c: IndexerCommon, chainId: number): Promise<void> {
  const { kafka } = c.options;
  const admin = await createLogAdmin({
    brokers: kafka.brokers,
    ...kafka.security,
    clientId: `indexer-${chainId}-admin`,
    logger: c.log,
  });
  try {
    await admin.ensureTopic({
      topic: kafka.topic,
      partitions: kafka.partitions,
      replicationFactor: kafka.replicationFactor,
    });
  } finally {
    await admin.close();
  }
}
