import { Worker } from 'node:worker_threads';
import type { Logger } from '@vault-yield/common';
import {
  DEFAULT_RECORD_ENCODING,
  encodeBinaryRecord,
  type RecordEncoding,
  recordJson,
  type VaultRecord,
} from '@vault-yield/domain';
import type { LogSecurity } from '@vault-yield/log';
import { type EncodedBatch, type FromPublisher, fromThreadError, type ToPublisher } from './protocol.js';

/** Publishes record batches from a thread of its own; same contract as packages/log's Publisher. */
export interface RecordPublisher {
  /**
   * Resolves once Kafka acknowledged every record of the batch. Batches are published in call
   * order, one at a time; a caller that needs batch B after batch A (per-vault order) waits for
   * A's ack before publishing B, exactly as with the in-process publisher.
   */
  publish(records: readonly VaultRecord[]): Promise<void>;
  /** The thread died (or never started): every publish fails; close it and start another. */
  readonly broken: boolean;
  close(): Promise<void>;
}

export interface ThreadedPublisherConfig {
  brokers: readonly string[];
  /**
   * SASL/TLS of the brokers (the thread shares no state with this one: handed in its data);
   * unset: plaintext (a test broker).
   */
  security?: LogSecurity;
  clientId: string;
  topic: string;
  logger: Logger;
  /** Called with a batch's size in bytes (record values, as sent) once Kafka acknowledged it. */
  onAcked?: (records: number, bytes: number) => void;
  /** How records are written to the log (default binary; see packages/domain records/codec.ts). */
  encoding?: RecordEncoding;
}

/**
 * packages/log's publisher (idempotent producer, acks -1, keyed by vault) in a worker thread. The
 * Kafka client's protocol work (partitioning, record batches, CRCs) costs about as much CPU as
 * reading and decoding the chain; in a thread of its own it runs beside the indexer's main loop
 * instead of taking turns with it. Records are encoded here and cross as one transferred buffer.
 */
export async function createThreadedPublisher(config: ThreadedPublisherConfig): Promise<RecordPublisher> {
  const { logger } = config;
  const worker = new Worker(new URL('./boot.mjs', import.meta.url), {
    workerData: {
      brokers: [...config.brokers],
      security: config.security ?? {},
      clientId: config.clientId,
      topic: config.topic,
      logLevel: logger.level,
    },
    // The boot file registers tsx itself; the parent's loader flags are not for the thread.
    execArgv: [],
  });
  const pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  let nextId = 1;
  let broken: Error | undefined;
  let onReady!: { resolve: () => void; reject: (err: Error) => void };
  const ready = new Promise<void>((resolve, reject) => {
    onReady = { resolve, reject };
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));

  const failAll = (err: Error) => {
    broken ??= err;
    onReady.reject(err);
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('message', (m: FromPublisher) => {
    switch (m.type) {
      case 'ready':
        onReady.resolve();
        break;
      case 'init-failed':
        failAll(fromThreadError(m.error));
        break;
      case 'done':
        pending.get(m.id)?.resolve();
        pending.delete(m.id);
        break;
      case 'failed':
        pending.get(m.id)?.reject(fromThreadError(m.error));
        pending.delete(m.id);
        break;
      case 'log':
        relay(logger, m.line);
        break;
      default:
    }
  });
  worker.on('error', (err) => failAll(err));
  worker.on('exit', (code) => failAll(new Error(`publisher thread exited (code ${code})`)));
  await ready;

  const send = (m: ToPublisher) => worker.postMessage(m);
  return {
    get broken() {
      return broken !== undefined;
    },
    publish(records) {
      if (broken) return Promise.reject(broken);
      if (records.length === 0) return Promise.resolve();
      const id = nextId++;
      const batch = encodeBatch(records, config.encoding);
      const bytes = batch.bytes.byteLength;
      return new Promise<void>((resolve, reject) => {
        pending.set(id, {
          resolve: () => {
            config.onAcked?.(records.length, bytes);
            resolve();
          },
          reject,
        });
        worker.postMessage({ type: 'publish', id, ...batch } satisfies ToPublisher, [batch.bytes]);
      });
    },
    async close() {
      if (!broken) send({ type: 'close' });
      const timer = setTimeout(() => void worker.terminate(), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The batch as bytes: each record in the log's encoding (packages/domain encodeRecordAs), written
 * into one buffer that moves to the publisher thread without a copy (unpooled: a transferred pool
 * slab would detach every Buffer on it).
 */
export function encodeBatch(
  records: readonly VaultRecord[],
  encoding: RecordEncoding = DEFAULT_RECORD_ENCODING,
): EncodedBatch {
  // JSON stays text until it is written into the batch (no Buffer per record).
  const values: (Buffer | string)[] =
    encoding === 'binary' ? records.map((r) => encodeBinaryRecord(r)) : records.map((r) => recordJson(r));
  const offsets = new Uint32Array(values.length + 1);
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    offsets[i] = total;
    const v = values[i]!;
    total += typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : v.byteLength;
  }
  offsets[values.length] = total;
  const bytes = Buffer.allocUnsafeSlow(total);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (typeof v === 'string') bytes.write(v, offsets[i]!, 'utf8');
    else v.copy(bytes, offsets[i]!);
  }
  return { keys: records.map((r) => r.vault), offsets, bytes: bytes.buffer as ArrayBuffer };
}

/** A pino line from the publisher thread, logged again by the indexer's logger. */
function relay(logger: Logger, line: string): void {
  try {
    const {
      level,
      msg,
      time: _time,
      service: _service,
      ...fields
    } = JSON.parse(line) as Record<string, unknown>;
    const at = typeof level === 'string' && level in levels ? (level as keyof typeof levels) : 'info';
    logger[at](fields, typeof msg === 'string' ? msg : '');
  } catch {
    logger.info({ line }, 'publisher thread');
  }
}

const levels = { trace: 1, debug: 1, info: 1, warn: 1, error: 1, fatal: 1 };
