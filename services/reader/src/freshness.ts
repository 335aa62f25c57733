import type { Logger } from '@vault-yield/common';
import { createLogAdmin, type LogAdmin } from '@vault-yield/log';
import { type Freshness, liveLog, type Pool, projectionFreshness } from '@vault-yield/store';
import type { ReaderConfig } from './config.js';

/** How long one reading serves /ready and /metrics (a load balancer polls every few seconds). */
const FRESH_FOR_MS = 1_000;
/** Longest wait for the topic's high watermarks before reporting the records of lag unknown. */
const KAFKA_TIMEOUT_MS = 3_000;

export interface FreshnessReading extends Freshness {
  /** Why the records of lag are unknown (no brokers configured, or Kafka did not answer). */
  kafkaError?: string;
  /** The limit crossed, when the projection is too far behind to serve (`/ready` answers 503). */
  tooFar: string | null;
}

export interface FreshnessProbe {
  /** The projection's lag, read at most once a second (concurrent callers share one reading). */
  read(): Promise<FreshnessReading>;
  close(): Promise<void>;
}

/**
 * Measures how far the projection the reader serves is behind the log and the chain, with what a
 * reader has: Postgres (its schema's `consumer_offsets` and `vault_snapshot`, the indexer's
 * checkpoint when its role may read it) and Kafka (the topic's high watermarks, when
 * `KAFKA_BROKERS` is set). See `projectionFreshness` for the figures. When `schema` is a views
 * schema whose live build names its log (`vy_live_log()`: after a reindex, its new topic and
 * checkpoint namespace), that log is measured instead of the configured topic and indexer schema.
 */
export function createFreshnessProbe(o: {
  pool: Pool;
  schema: string;
  config: ReaderConfig['freshness'];
  log: Logger;
}): FreshnessProbe {
  const { config, log } = o;
  let admin: Promise<LogAdmin> | null = null;
  let last: { at: number; reading: Promise<FreshnessReading> } | null = null;
  let closed = false;

  /** The topic and checkpoint schema the live projection's log is measured by (read each reading). */
  const measured = async (): Promise<{ topic: string | null; indexerSchema: string | null }> => {
    const configured = { topic: config.kafka?.topic ?? null, indexerSchema: config.indexerSchema };
    const live = await liveLog(o.pool, o.schema).catch((err: unknown) => {
      log.warn({ err: { message: (err as Error).message } }, 'freshness: the live log unknown');
      return null;
    });
    if (!live?.topic) return configured;
    return { topic: live.topic, indexerSchema: live.indexerSchema ?? configured.indexerSchema };
  };

  const highWatermarks = async (topic: string): Promise<Map<number, bigint>> => {
    const k = config.kafka!;
    admin ??= createLogAdmin({
      brokers: k.brokers,
      clientId: 'vault-yield-reader',
      ...k.security,
      logger: log,
      kafkaLogLevel: 'error',
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const offsets = await Promise.race([
        admin.then((a) => a.offsets(topic)),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer from Kafka in ${KAFKA_TIMEOUT_MS} ms`)),
            KAFKA_TIMEOUT_MS,
          );
        }),
      ]);
      return new Map(offsets.map((p) => [p.partition, BigInt(p.high)]));
    } catch (err) {
      // A fresh client next time (the brokers may have moved, the connection may be dead).
      const failed = admin;
      admin = null;
      failed?.then((a) => a.close()).catch(() => {});
      throw err;
    } finally {
      clearTimeout(timer);
    }
  };

  const measure = async (): Promise<FreshnessReading> => {
    let high: Map<number, bigint> | null = null;
    let kafkaError: string | undefined;
    const on = await measured();
    if (!config.kafka || on.topic === null) kafkaError = 'KAFKA_BROKERS not set';
    else {
      try {
        high = await highWatermarks(on.topic);
      } catch (err) {
        kafkaError = (err as Error).message;
        log.warn({ err: { message: kafkaError } }, 'freshness: high watermarks unknown');
      }
    }
    const f = await projectionFreshness(o.pool, o.schema, {
      topic: on.topic ?? '',
      high,
      indexerSchema: on.indexerSchema,
    });
    // Without the records of lag, blocks and seconds are upper bounds (a quiet block counts):
    // they are reported, never a reason to leave the pool.
    let tooFar: string | null = null;
    if (f.records !== null && config.maxLagRecords > 0 && f.records > config.maxLagRecords)
      tooFar = `projection behind the log by ${f.records} records (limit ${config.maxLagRecords})`;
    else if (
      f.records !== null &&
      f.seconds !== null &&
      config.maxLagSeconds > 0 &&
      f.seconds > config.maxLagSeconds
    )
      tooFar = `projection behind chain ${f.chainId} by ${f.seconds} s (limit ${config.maxLagSeconds} s)`;
    return { ...f, ...(kafkaError ? { kafkaError } : {}), tooFar };
  };

  return {
    read() {
      const now = Date.now();
      if (last && now - last.at < FRESH_FOR_MS) return last.reading;
      const reading = measure();
      last = { at: now, reading };
      // A failed reading (Postgres down) is not kept: the next call asks again.
      reading.catch(() => {
        if (last?.reading === reading) last = null;
      });
      return reading;
    },
    async close() {
      if (closed) return;
      closed = true;
      const a = admin;
      admin = null;
      await a?.then((x) => x.close()).catch(() => {});
    },
  };
}
