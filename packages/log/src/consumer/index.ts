import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer, EachBatchPayload } from 'kafkajs';
import { brokersAnswer, kafkaClient, type LogClientConfig } from '../kafka.js';

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
  /**
   * How long the consumer may show no sign of life (no fetch, heartbeat, group join or batch)
   * while no batch is being handled before it is replaced by a new one (60 s unless set).
   */
  stallTimeoutMs?: number;
  /** Called each time the consumer is replaced (`dead`: kafkajs gave up; `stalled`: silent). */
  onReplace?: (reason: ReplaceReason) => void;
}

/** Why a batch consumer replaced its kafkajs consumer. */
export type ReplaceReason = 'dead' | 'stalled';

/**
 * Whether a consumer has stalled: running, no batch in hand, and no sign of life for longer than
 * `stallTimeoutMs`. A healthy idle consumer fetches every `maxWaitTimeMs`, a busy one is inside a
 * batch, and kafkajs's retries of a fetch wait ≤ 30 s each. One riding out a long broker outage
 * may be replaced too, at no cost: its successor keeps trying to connect as it would have.
 */
export function consumerStalled(s: {
  now: number;
  lastSign: number;
  batchesInHand: number;
  stallTimeoutMs: number;
}): boolean {
  return s.batchesInHand === 0 && s.now - s.lastSign > s.stallTimeoutMs;
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
  const stallTimeoutMs = config.stallTimeoutMs ?? 60_000;
  /** The kafkajs consumer in use, with its signs of life. Replaced whole when it dies or stalls. */
  let live: { c: Consumer; lastSign: number; inHand: number } | null = null;
  let assigned: number[] = [];
  // Batches wait until the seeks of the latest assignment are registered.
  let seeksReady: Promise<void> = Promise.resolve();
  let stopping = false;
  let watchdog: NodeJS.Timeout | null = null;
  let replacing: Promise<void> | null = null;
  /** A replacement's start, while it runs (stop lets it finish before disconnecting it). */
  let launching: Promise<void> | null = null;
  /** Wakes a replacement's backoff when the consumer is stopped. */
  let wake: AbortController | null = null;
  /** Replacements since a batch was last applied: the backoff grows with them (1 s … 30 s). */
  let failures = 0;

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
    // A replaced consumer's batches are abandoned: its successor reads them again.
    const active = () => live?.c === c && isRunning() && !isStale();
    if (!active() || batch.messages.length === 0) return;
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
    const mine = live;
    if (mine) mine.inHand++;
    let outcome: BatchOutcome;
    try {
      outcome = await config.handleBatch(
        { topic, partition, messages, commit, highWatermark: batch.highWatermark },
        { heartbeat, isActive: active },
      );
    } finally {
      if (mine) {
        mine.inHand--;
        mine.lastSign = Date.now();
      }
    }
    if (outcome && 'seekTo' in outcome) {
      logger?.warn({ topic, partition, seekTo: outcome.seekTo }, 'batch not at the stored offset; seeking');
      c.seek({ topic, partition, offset: outcome.seekTo });
      return;
    }
    if (outcome) failures = 0;
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

  /** A kafkajs consumer, joined and running. */
  async function launch(): Promise<void> {
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
    const mine = { c, lastSign: Date.now(), inHand: 0 };
    live = mine;
    const sign = () => {
      mine.lastSign = Date.now();
    };
    for (const e of [c.events.FETCH_START, c.events.HEARTBEAT, c.events.START_BATCH_PROCESS]) c.on(e, sign);
    // kafkajs has no rebalance callback: the GROUP_JOIN event carries the new assignment.
    c.on(c.events.GROUP_JOIN, (event) => {
      if (live !== mine) return;
      sign();
      const partitions = [...(event.payload.memberAssignment[topic] ?? [])].sort((a, b) => a - b);
      assigned = partitions;
      logger?.info({ topic, groupId, partitions }, 'partitions assigned');
      seeksReady = seekToStored(c, partitions).catch((err: unknown) => {
        // The handler still checks every batch against the stored offset, so this is safe.
        logger?.warn({ err }, 'could not seek to stored offsets; relying on the batch check');
      });
    });
    c.on(c.events.CRASH, (event) => {
      const { error, restart } = event.payload;
      logger?.error({ err: error, restart }, 'consumer crashed');
      // kafkajs restarts a consumer after a retriable error itself; after any other it stays
      // down for good (an unexpected TypeError in a handler is enough), so it is replaced.
      if (!restart) replace(mine.c, 'dead');
    });
    await brokersAnswer(config);
    await c.connect();
    await c.subscribe({ topic, fromBeginning: true });
    await c.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: config.partitionsConsumedConcurrently ?? 4,
      eachBatch: (payload) => eachBatch(c, payload),
    });
  }

  /**
   * Replaces a consumer that died or stalled with a new one, after a backoff. Safe at any point:
   * offsets live with the projection, and the new consumer seeks to them when it joins.
   */
  function replace(old: Consumer, reason: ReplaceReason): void {
    if (stopping || replacing || live?.c !== old) return;
    const backoffMs = Math.min(30_000, 1_000 * 2 ** Math.min(failures, 5));
    failures++;
    logger?.error(
      { topic, groupId, reason, stallTimeoutMs, backoffMs },
      reason === 'dead' ? 'consumer gave up; replacing it' : 'consumer stalled; replacing it',
    );
    config.onReplace?.(reason);
    live = null;
    assigned = [];
    const abort = new AbortController();
    wake = abort;
    replacing = (async () => {
      // The old consumer may hang on its way out (perhaps why it stalled): wait a little only.
      await Promise.race([old.disconnect().catch(() => {}), delay(5_000, abort.signal, false)]);
      await delay(backoffMs, abort.signal);
      if (stopping) return;
      // Not awaited: the new consumer is judged by its signs of life from here on, so one that
      // fails to start (the broker still away) or hangs on its way in is replaced in its turn.
      launching = launch()
        .catch((err: unknown) => logger?.error({ err }, 'the replacement consumer did not start'))
        .finally(() => {
          launching = null;
        });
    })().finally(() => {
      replacing = null;
      wake = null;
    });
  }

  const check = () => {
    const mine = live;
    if (!mine || stopping || replacing) return;
    const { lastSign, inHand } = mine;
    if (consumerStalled({ now: Date.now(), lastSign, batchesInHand: inHand, stallTimeoutMs }))
      replace(mine.c, 'stalled');
  };

  return {
    async start() {
      stopping = false;
      await launch();
      watchdog = setInterval(check, Math.max(100, Math.min(5_000, stallTimeoutMs / 4)));
      watchdog.unref();
    },
    async stop() {
      stopping = true;
      if (watchdog) clearInterval(watchdog);
      watchdog = null;
      wake?.abort();
      await replacing;
      // A consumer disconnected halfway through its start may connect afterwards (kafkajs#1639):
      // let a replacement's start end first, waiting 10 s at most.
      if (launching) await Promise.race([launching, delay(10_000, undefined, false)]);
      const mine = live;
      live = null;
      if (mine) await mine.c.disconnect();
      assigned = [];
    },
    assignment: () => [...assigned],
  };
}

/**
 * Resolves after `ms`, or at once when `signal` aborts (never rejects). `ref: false` for a wait
 * raced against work that holds the process open itself: the timer left behind keeps nothing alive.
 */
function delay(ms: number, signal?: AbortSignal, ref = true): Promise<void> {
  return sleep(ms, undefined, { signal, ref }).catch(() => {});
}
