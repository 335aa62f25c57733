import { BINARY_MAGIC, decodeBinaryHead, decodeBinaryRecord, encodeBinaryRecord } from './binary.js';
import {
  type DecodeResult,
  decodeJsonRecord,
  encodeRecord,
  type RecordHead,
  type VaultRecord,
} from './envelope.js';

/**
 * The log's two encodings of a record: `json` (UTF-8 text, what schema 2 and 3 logs hold) and
 * `binary` (binary.ts, the default for new records). A log may hold both: the first byte tells
 * them apart, and every reader takes either.
 */
export const RECORD_ENCODINGS = ['binary', 'json'] as const;
export type RecordEncoding = (typeof RECORD_ENCODINGS)[number];
/** What writers use unless told otherwise. */
export const DEFAULT_RECORD_ENCODING: RecordEncoding = 'binary';

/** Which encoding bytes from the log are in (by their first byte; JSON text never starts with it). */
export function encodingOf(bytes: Uint8Array): RecordEncoding {
  return bytes[0] === BINARY_MAGIC ? 'binary' : 'json';
}

export function encodeRecordAs(r: VaultRecord, encoding: RecordEncoding): Buffer {
  return encoding === 'binary' ? encodeBinaryRecord(r) : encodeRecord(r);
}

/** Parses bytes from the log, in either encoding; never throws — a bad record is a value the caller dead-letters. */
export function decodeRecord(bytes: Buffer | Uint8Array | null): DecodeResult {
  if (!bytes || bytes.length === 0) return { ok: false, reason: 'empty record value' };
  // No copy: a Buffer decodes in place, a plain Uint8Array through a view of the same memory.
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return encodingOf(buf) === 'binary' ? decodeBinaryRecord(buf) : decodeJsonRecord(buf);
}

/**
 * A record decoded in two steps: its head now, the whole record when `record()` is called (each
 * call decodes again: keep the result only as long as it is needed). A JSON record is parsed whole
 * at once (its head is the record). `record()` refuses exactly what `decodeRecord` refuses.
 */
export type LazyRecord =
  | { ok: true; head: RecordHead; record: () => DecodeResult }
  | { ok: false; reason: string };

export function decodeRecordLazily(bytes: Buffer | Uint8Array | null): LazyRecord {
  if (!bytes || bytes.length === 0) return { ok: false, reason: 'empty record value' };
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (encodingOf(buf) === 'json') {
    const d = decodeJsonRecord(buf);
    return d.ok ? { ok: true, head: d.record, record: () => d } : d;
  }
  const h = decodeBinaryHead(buf);
  return h.ok ? { ok: true, head: h.head, record: () => decodeBinaryRecord(buf, h.head) } : h;
}
