import type { Consumer, EachBatchPayload } from 'kafkajs';
import { kafkaClient, type LogClientConfig } from '../kafka.js';

/** One message of the log with its position, as bytes and as the caller's `decode` made it. */
export interface LogMessage<T> {
  partition: number;
  /** Kafka offset (int64) as a decimal string. */
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  /** Broker timestamp, Unix ms. */
  timestamp: number;
  decoded: T;
}

/**
 * The position a batch moves its partition to. The consumer stores it in the same database
 * transaction as the batch's results (offsets live with the projection, not in Kafka).
 */
export interface OffsetCommit {
  groupId: string;
  topic: string;
  partition: number;
  /** Offset of the first message not yet applied: last message + 1. */
  nextOffset: string;
}

export interface LogBatch<T> {
  topic: string;
  partition: number;
  /** In offset order; never empty. */
  messages: LogMessage<T>[];
  commit: OffsetCommit;
  /** Partition's high watermark when fetched (lag = highWatermark − commit.nextOffset). */
  highWatermark: string;
}

export interface BatchControl {
  heartbeat(): Promise<void>;
  /**
   * False once the consumer is stopping or the partition was re-sought (a rebalance moved it):
   * the handler should abandon the batch before it commits anything.
   */
  isActive(): boolean;
}

/**
 * What the handler did. `{ applied: true }`: the batch (or the part of it not applied before) is
 * committed with its offset; the consumer moves on. `{ seekTo }`: the batch did not start at the
 * stored offset (a gap); nothing was applied and the partition is re-read from `seekTo`.
 * `undefined`: abandoned (stopping or stale); the batch will be fetched again.
 */
export type BatchOutcome = undefined | { applied: true } | { seekTo: string };

export interface BatchConsumerConfig<T> extends LogClientConfig {
  /** Kafka consumer group: partition assignment and lag monitoring. */
  groupId: string;
  /** Group named in each batch's `commit` (the offsets' key in the projection); defaults to groupId. */
  offsetsGroupId?: string;
  topic: string;
  decode: (value: Buffer | null) => T;
  /**
   * Next offsets as stored with the projection; called on start and on every assignment.
   * A partition missing from the map starts at offset 0.
   */
  storedOffsets: (topic: string, partitions: number[]) => Promise<Map<number, string>>;
  handleBatch: (batch: LogBatch<T>, control: BatchControl) => Promise<BatchOutcome>;
  /** Partitions processed at once by this instance (their DB transactions overlap). */
  partitionsConsumedConcurrently?: number;
  maxBytesPerPartition?: number;
  maxBytes?: number;
  minBytes?: number;
  maxWaitTimeMs?: number;
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
}

export interface BatchConsumer {
  /** Joins the group and starts consuming; resolves once running (not when caught up). */
  start(): Promise<void>;
  /** Finishes the batches in flight, leaves the group. */
  stop(): Promise<void>;
  /** Partitions currently assigned to this instance. */
  assignment(): number[];
}

/**
 * Exactly-once batch consumer for projections ("storing offsets outside Kafka"): auto-commit
 * off, no auto-resolve, offsets read back from the projection on every assignment and sought to.
 * After the handler has committed a batch, the offset is committed to Kafka too — only so that
 * lag monitoring works; Kafka's committed offset is never used to decide what to apply.
 */
export function createBatchConsumer<T>(config: BatchConsumerConfig<T>): BatchConsumer {
  const { topic, groupId, logger } = config;
  const kafka = kafkaClient(config);
  let consumer: Consumer | null = null;
  let assigned: number[] = [];
  // Batches wait until the seeks of the latest assignment are registered.
  let seeksReady: Promise<void> = Promise.resolve();

  async function seekToStored(c: Consumer, partitions: number[]): Promise<void> {
    if (partitions.length === 0) return;
    const stored = await config.storedOffsets(topic, partitions);
    // A partition never applied starts at 0: the log keeps its whole history (retention.ms=-1).
    for (const partition of partitions) c.seek({ topic, partition, offset: stored.get(partition) ?? '0' });
    logger?.info({ topic, partitions, offsets: Object.fromEntries(stored) }, 'sought to stored offsets');
  }

  async function eachBatch(c: Consumer, payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale, commitOffsetsIfNecessary } = payload;
    await seeksReady;
    if (!isRunning() || isStale() || batch.messages.length === 0) return;
    const partition = batch.partition;
    const messages: LogMessage<T>[] = batch.messages.map((m) => ({
      partition,
      offset: m.offset,
      key: m.key ?? null,
      value: m.value ?? null,
      timestamp: Number(m.timestamp),
      decoded: config.decode(m.value ?? null),
    }));
    const last = messages[messages.length - 1] as LogMessage<T>;
    const commit: OffsetCommit = {
      groupId: config.offsetsGroupId ?? groupId,
      topic,
      partition,
      nextOffset: (BigInt(last.offset) + 1n).toString(),
    };
    const outcome = await config.handleBatch(
      { topic, partition, messages, commit, highWatermark: batch.highWatermark },
      { heartbeat, isActive: () => isRunning() && !isStale() },
    );
    if (outcome && 'seekTo' in outcome) {
      logger?.warn({ topic, partition, seekTo: outcome.seekTo }, 'batch not at the stored offset; seeking');
      c.seek({ topic, partition, offset: outcome.seekTo });
      return;
    }
    // Abandoned, or a pending seek (the partition moved or was re-sought): resolve nothing.
    if (!outcome || isStale()) return;
    resolveOffset(last.offset);
    await heartbeat();
    try {
      await commitOffsetsIfNecessary({
        topics: [{ topic, partitions: [{ partition, offset: commit.nextOffset }] }],
      });
    } catch (err) {
      // Only lag monitoring depends on it; the next batch commits again.
      logger?.debug({ err, partition }, 'kafka offset commit failed (monitoring only)');
    }
  }

  return {
    async start() {
      const c = kafka.consumer({
        groupId,
        sessionTimeout: config.sessionTimeoutMs ?? 30_000,
        heartbeatInterval: config.heartbeatIntervalMs ?? 3_000,
        maxBytesPerPartition: config.maxBytesPerPartition ?? 8 * 1024 * 1024,
        maxBytes: config.maxBytes ?? 32 * 1024 * 1024,
        minBytes: config.minBytes ?? 1,
        maxWaitTimeInMs: config.maxWaitTimeMs ?? 250,
        allowAutoTopicCreation: false,
        retry: { retries: 10 },
      });
      consumer = c;
      // kafkajs has no rebalance callback: the GROUP_JOIN event carries the new assignment.
      c.on(c.events.GROUP_JOIN, (event) => {
        const partitions = [...(event.payload.memberAssignment[topic] ?? [])].sort((a, b) => a - b);
        assigned = partitions;
        logger?.info({ topic, groupId, partitions }, 'partitions assigned');
        seeksReady = seekToStored(c, partitions).catch((err: unknown) => {
          // The handler still checks every batch against the stored offset, so this is safe.
          logger?.warn({ err }, 'could not seek to stored offsets; relying on the batch check');
        });
      });
      c.on(c.events.CRASH, (event) => {
        logger?.error({ err: event.payload.error, restart: event.payload.restart }, 'consumer crashed');
      });
      await c.connect();
      await c.subscribe({ topic, fromBeginning: true });
      await c.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: config.partitionsConsumedConcurrently ?? 4,
        eachBatch: (payload) => eachBatch(c, payload),
      });
    },
    async stop() {
      const c = consumer;
      consumer = null;
      if (c) await c.disconnect();
      assigned = [];
    },
    assignment: () => [...assigned],
  };
}
