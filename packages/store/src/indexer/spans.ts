/**
 * The indexer's sequence rows beyond the reorg window, compacted (migration 0019).
 *
 * Below the window no reorg reaches a row (a reorg deeper than the window halts the indexer), so
 * only `vault-yield republish` reads it: to number a vault's records of a block range again. Most
 * of a row it can recount from the chain — a block with events of the vault has one record per
 * event (the same decoding as the block walk) — but not a `mark`, which the mark policy made in a
 * block without events of the vault. So a run of consecutive numbers is kept as one span: its
 * first and last block with records, the hash of the last (which names every block below it),
 * its first and last number, how many blocks had records, and the blocks of one record that may
 * be a mark. A revert's number (above the orphaned blocks') breaks a run: the numbers it skipped
 * stay visible as the gap they are.
 */

/** The numbers the indexer gave a vault's records in a run of blocks below the reorg window. */
export interface StoredVaultSeqSpan {
  vault: string;
  /** First block of the span with records of the vault. */
  fromBlock: number;
  /** Last block of the span with records of the vault. */
  toBlock: number;
  /** Hash of `toBlock` when its records were published. */
  toHash: string;
  firstSeq: number;
  lastSeq: number;
  /** Blocks of the span with records of the vault. */
  blocks: number;
  /**
   * Blocks of the span with one record that may be a mark, ascending: every mark's block (and,
   * for rows written before migration 0019, every block of one record).
   */
  marks: number[];
}

/** One sequence row as compaction reads it (`mark`: null when unknown, written before 0019). */
export interface SeqRow {
  vault: string;
  blockNumber: number;
  blockHash: string;
  firstSeq: number;
  lastSeq: number;
  mark: boolean | null;
}

export interface SpanLimits {
  /** A span covers at most this many blocks (republish recounts a span's logs whole). */
  maxBlocks: number;
  /** A span holds at most this many marks (its row is rewritten whole as it grows). */
  maxMarks: number;
}

export const DEFAULT_SPAN_LIMITS: SpanLimits = { maxBlocks: 50_000, maxMarks: 4_096 };

/** Packs ascending block numbers as unsigned LEB128 varints of their differences, the first from `from`. */
export function packMarks(from: number, marks: readonly number[]): Buffer {
  const out: number[] = [];
  let prev = from;
  for (const m of marks) {
    let d = m - prev;
    if (!Number.isSafeInteger(d) || d < 0)
      throw new Error(`marks not ascending from ${from}: ${m} after ${prev}`);
    prev = m;
    while (d >= 0x80) {
      out.push((d % 0x80) | 0x80);
      d = Math.floor(d / 0x80);
    }
    out.push(d);
  }
  return Buffer.from(out);
}

/** The block numbers packMarks packed. Throws on a truncated varint. */
export function unpackMarks(from: number, packed: Uint8Array): number[] {
  const out: number[] = [];
  let prev = from;
  let d = 0;
  let scale = 1;
  for (const byte of packed) {
    d += (byte & 0x7f) * scale;
    if (byte & 0x80) {
      scale *= 0x80;
      continue;
    }
    prev += d;
    out.push(prev);
    d = 0;
    scale = 1;
  }
  if (scale !== 1) throw new Error('packed marks end inside a number');
  return out;
}

/** Whether a row may be a mark: one record, and not known to be an event's. */
const single = (r: SeqRow) => r.firstSeq === r.lastSeq && r.mark !== false;

/**
 * Compacts a vault's rows (ascending blocks, all above `last`'s) into its spans: a row extends the
 * last span when its first number follows the span's last, it is above the span's last block,
 * and the span stays within `limits`; else it begins a new span. Returns the spans to write, in
 * order: `last` extended (when it was), and the new ones.
 */
export function compactIntoSpans(
  last: StoredVaultSeqSpan | null,
  rows: readonly SeqRow[],
  limits: SpanLimits = DEFAULT_SPAN_LIMITS,
): StoredVaultSeqSpan[] {
  const out: StoredVaultSeqSpan[] = [];
  let span: StoredVaultSeqSpan | null = last ? { ...last, marks: [...last.marks] } : null;
  /** Whether `span` is to be written: new, or `last` extended. */
  let changed = false;
  for (const r of rows) {
    const mark = single(r);
    const extends_ =
      span !== null &&
      r.vault === span.vault &&
      r.firstSeq === span.lastSeq + 1 &&
      r.blockNumber > span.toBlock &&
      r.blockNumber - span.fromBlock < limits.maxBlocks &&
      (!mark || span.marks.length < limits.maxMarks);
    if (span && extends_) {
      span.toBlock = r.blockNumber;
      span.toHash = r.blockHash;
      span.lastSeq = r.lastSeq;
      span.blocks += 1;
      if (mark) span.marks.push(r.blockNumber);
      changed = true;
      continue;
    }
    if (span && changed) out.push(span);
    changed = true;
    span = {
      vault: r.vault,
      fromBlock: r.blockNumber,
      toBlock: r.blockNumber,
      toHash: r.blockHash,
      firstSeq: r.firstSeq,
      lastSeq: r.lastSeq,
      blocks: 1,
      marks: mark ? [r.blockNumber] : [],
    };
  }
  if (span && changed) out.push(span);
  return out;
}
