import { isUtf8 } from 'node:buffer';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { PoolClient } from '../pool/index.js';

/**
 * COPY … FROM STDIN in text format, fed from fixed-size chunks written in place: field text is
 * encoded straight into the chunk and byte fields (a record's JSON as read from the log) are
 * copied in without becoming strings, so a batch of kilobyte rows costs no per-row allocation.
 */

const CHUNK = 256 * 1024;
const BACKSLASH = 0x5c;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

/** COPY text format: backslash, tab, newline and carriage return are escaped with a backslash. */
export function copyText(v: string): string {
  // indexOf scans are far cheaper than a regex over a kilobyte of JSON; most values need nothing.
  if (v.indexOf('\\') < 0 && v.indexOf('\t') < 0 && v.indexOf('\n') < 0 && v.indexOf('\r') < 0) return v;
  return v.replace(/[\\\t\n\r]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r',
  );
}

/**
 * `bytes` as a COPY text field: as they are unless they hold a byte that must be escaped, or are
 * not valid UTF-8 (decoded then, invalid sequences becoming U+FFFD, as the record's decoder read
 * them: Postgres would refuse the whole COPY, and with it the batch, over one bad byte).
 */
function copyBytes(bytes: Uint8Array): Uint8Array | string {
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.indexOf(BACKSLASH) < 0 && b.indexOf(TAB) < 0 && b.indexOf(LF) < 0 && b.indexOf(CR) < 0 && isUtf8(b))
    return b;
  return copyText(b.toString('utf8'));
}

/** Builds the COPY stream: `text` appends already-escaped text, `bytes` a field of raw UTF-8. */
export class CopyWriter {
  private buf = Buffer.allocUnsafe(CHUNK);
  private at = 0;
  readonly chunks: Buffer[] = [];

  text(s: string): void {
    // A UTF-8 character takes at most 3 bytes per UTF-16 code unit.
    if (this.at + s.length * 3 > CHUNK) {
      this.flush();
      if (s.length * 3 > CHUNK) {
        this.chunks.push(Buffer.from(s, 'utf8'));
        return;
      }
    }
    this.at += this.buf.write(s, this.at, 'utf8');
  }

  bytes(field: Uint8Array): void {
    const v = copyBytes(field);
    if (typeof v === 'string') {
      this.text(v);
      return;
    }
    if (this.at + v.byteLength > CHUNK) {
      this.flush();
      if (v.byteLength > CHUNK) {
        this.chunks.push(Buffer.from(v));
        return;
      }
    }
    this.buf.set(v, this.at);
    this.at += v.byteLength;
  }

  /** Closes the current chunk (the next write starts a fresh one: chunks are never reused). */
  flush(): void {
    if (this.at === 0) return;
    this.chunks.push(this.buf.subarray(0, this.at));
    this.buf = Buffer.allocUnsafe(CHUNK);
    this.at = 0;
  }
}

/**
 * Rows encoded for COPY as they are added: the caller keeps bytes (off the JS heap) instead of row
 * objects until the statement runs — a batch's thousands of rows are then nothing for the garbage
 * collector to trace or promote.
 */
export class CopyBuffer<T> {
  readonly writer = new CopyWriter();
  private n = 0;
  constructor(private readonly line: (w: CopyWriter, row: T) => void) {}
  add(row: T): void {
    this.line(this.writer, row);
    this.n++;
  }
  get size(): number {
    return this.n;
  }
  /** `rows` as a buffer of `line`: an array is encoded now, a buffer (made with `line`) is itself. */
  static of<T>(rows: readonly T[] | CopyBuffer<T>, line: (w: CopyWriter, row: T) => void): CopyBuffer<T> {
    if (rows instanceof CopyBuffer) return rows;
    const b = new CopyBuffer(line);
    for (const r of rows) b.add(r);
    return b;
  }
}

/** Runs `copy … from stdin` with the rows encoded in `rows`. */
export async function copyRows<T>(client: PoolClient, sql: string, rows: CopyBuffer<T>): Promise<void> {
  if (rows.size === 0) return;
  rows.writer.flush();
  await pipeline(Readable.from(rows.writer.chunks, { objectMode: false }), client.query(copyFrom(sql)));
}

/**
 * COPY … FROM STDIN (FORMAT binary) of rows whose fields are text, bytes, boolean or int4 (a
 * number), each in Postgres' binary send format (text and bytea: their bytes as they are). Bytes need neither hex
 * nor escaping: half the bytes of the text format's `\x…` for a bytea, and no encoding work on
 * either side. A bytes field may be given in pieces (concatenated, not copied first).
 */
export type BinaryField = string | boolean | number | readonly Uint8Array[];

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

function fieldSize(f: BinaryField): number {
  if (typeof f === 'string') return Buffer.byteLength(f, 'utf8');
  if (typeof f === 'boolean') return 1;
  if (typeof f === 'number') return 4;
  let n = 0;
  for (const p of f) n += p.byteLength;
  return n;
}

/** The whole COPY stream of `rows` (header, tuples, trailer) in one buffer. */
export function binaryCopyData(rows: readonly (readonly BinaryField[])[]): Buffer {
  let size = SIGNATURE.length + 8 + 2;
  for (const row of rows) {
    size += 2;
    for (const f of row) size += 4 + fieldSize(f);
  }
  const out = Buffer.allocUnsafe(size);
  let at = SIGNATURE.copy(out, 0);
  at = out.writeInt32BE(0, at); // flags: no OIDs
  at = out.writeInt32BE(0, at); // header extension length
  for (const row of rows) {
    at = out.writeInt16BE(row.length, at);
    for (const f of row) {
      if (typeof f === 'string') {
        const n = out.write(f, at + 4, 'utf8');
        at = out.writeInt32BE(n, at) + n;
      } else if (typeof f === 'boolean') {
        at = out.writeInt32BE(1, at);
        out[at++] = f ? 1 : 0;
      } else if (typeof f === 'number') {
        at = out.writeInt32BE(4, at);
        at = out.writeInt32BE(f, at);
      } else {
        at = out.writeInt32BE(fieldSize(f), at);
        for (const p of f) {
          out.set(p, at);
          at += p.byteLength;
        }
      }
    }
  }
  at = out.writeInt16BE(-1, at);
  if (at !== size) throw new Error(`invariant: binary COPY wrote ${at} of ${size} bytes`);
  return out;
}

/** Runs `copy … from stdin (format binary)` with `rows`. */
export async function copyBinary(
  client: PoolClient,
  sql: string,
  rows: readonly (readonly BinaryField[])[],
): Promise<void> {
  if (rows.length === 0) return;
  await pipeline(Readable.from([binaryCopyData(rows)], { objectMode: false }), client.query(copyFrom(sql)));
}
