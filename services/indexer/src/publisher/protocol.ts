import type { LogSecurity } from '@vault-yield/log';

/**
 * A batch of encoded records: message i is keyed by `keys[i]`, its value is
 * `bytes[offsets[i] .. offsets[i + 1])` (the record as packages/domain's encodeRecord writes it).
 * `bytes` is transferred, not copied.
 */
export interface EncodedBatch {
  keys: string[];
  offsets: Uint32Array;
  bytes: ArrayBuffer;
}

/** What the indexer thread tells the publisher thread. */
export type ToPublisher = ({ type: 'publish'; id: number } & EncodedBatch) | { type: 'close' };

/** An error that crossed the thread boundary. */
export interface ThreadError {
  name: string;
  message: string;
  stack?: string;
}

/** What the publisher thread answers. */
export type FromPublisher =
  | { type: 'ready' }
  | { type: 'done'; id: number }
  | { type: 'failed'; id: number; error: ThreadError }
  | { type: 'init-failed'; error: ThreadError }
  /** A log line (pino JSON) for the indexer's logger. */
  | { type: 'log'; line: string }
  | { type: 'closed' };

/** The publisher settings the thread needs (the logger stays in the indexer thread). */
export interface PublisherThreadConfig {
  brokers: readonly string[];
  /** SASL/TLS of the brokers, from the indexer's config: threads do not share module state. */
  security: LogSecurity;
  clientId: string;
  topic: string;
  logLevel: string;
}

export function toThreadError(err: unknown): ThreadError {
  if (err instanceof Error) return { name: err.name, message: err.message, stack: err.stack };
  return { name: 'Error', message: String(err) };
}

export function fromThreadError(e: ThreadError): Error {
  const err = new Error(e.message);
  err.name = e.name;
  if (e.stack) err.stack = e.stack;
  return err;
}
