import { describe, expect, it } from 'vitest';
import { compactIntoSpans, packMarks, type SeqRow, unpackMarks } from './spans.js';

const h = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const A = `0x${'a'.repeat(40)}`;

describe('marks packed as varints of their differences', () => {
  it('round-trips, small differences in one byte each, large numbers whole', () => {
    const marks = [100, 101, 228, 229, 16_613, 2 ** 40, 2 ** 52];
    const packed = packMarks(100, marks);
    expect(unpackMarks(100, packed)).toEqual(marks);
    expect(packMarks(0, [1, 2, 3, 131]).length).toBe(5);
    expect(unpackMarks(7, packMarks(7, []))).toEqual([]);
    expect(() => packMarks(10, [9])).toThrow(/not ascending/);
    expect(() => unpackMarks(0, Buffer.from([0x80]))).toThrow(/inside a number/);
  });
});

describe('folding rows into spans', () => {
  const row = (vault: string, n: number, first: number, last: number, mark: boolean | null): SeqRow => ({
    vault,
    blockNumber: n,
    blockHash: h(n),
    firstSeq: first,
    lastSeq: last,
    mark,
  });

  it('keeps a run of numbers as one span: blocks counted, marks (and single rows of unknown kind) listed', () => {
    const spans = compactIntoSpans(null, [
      row(A, 10, 1, 3, false),
      row(A, 12, 4, 4, true),
      row(A, 15, 5, 5, false),
      row(A, 17, 6, 6, null),
    ]);
    expect(spans).toEqual([
      {
        vault: A,
        fromBlock: 10,
        toBlock: 17,
        toHash: h(17),
        firstSeq: 1,
        lastSeq: 6,
        blocks: 4,
        marks: [12, 17],
      },
    ]);
  });

  it('breaks a run at a gap in the numbers (a revert), extends the last span, and stays within the limits', () => {
    const last = {
      vault: A,
      fromBlock: 10,
      toBlock: 17,
      toHash: h(17),
      firstSeq: 1,
      lastSeq: 6,
      blocks: 4,
      marks: [12],
    };
    const spans = compactIntoSpans(
      last,
      [
        row(A, 20, 7, 7, true),
        row(A, 25, 10, 11, false),
        row(A, 26, 12, 12, true),
        row(A, 40, 13, 13, true),
        row(A, 41, 14, 14, true),
        row(A, 50, 15, 15, false),
        row(A, 62, 16, 16, false),
      ],
      { maxBlocks: 20, maxMarks: 2 },
    );
    expect(spans).toEqual([
      // extended by 20 (7 follows 6)
      { ...last, toBlock: 20, toHash: h(20), lastSeq: 7, blocks: 5, marks: [12, 20] },
      // 8 and 9 went to a revert: a new span, up to its second mark
      {
        vault: A,
        fromBlock: 25,
        toBlock: 40,
        toHash: h(40),
        firstSeq: 10,
        lastSeq: 13,
        blocks: 3,
        marks: [26, 40],
      },
      // a third mark is one too many
      {
        vault: A,
        fromBlock: 41,
        toBlock: 50,
        toHash: h(50),
        firstSeq: 14,
        lastSeq: 15,
        blocks: 2,
        marks: [41],
      },
      // 62 − 41 blocks is too many
      {
        vault: A,
        fromBlock: 62,
        toBlock: 62,
        toHash: h(62),
        firstSeq: 16,
        lastSeq: 16,
        blocks: 1,
        marks: [],
      },
    ]);
    // The span given is not changed.
    expect(last.marks).toEqual([12]);
    // Too many blocks: 30 is outside a span of 20 blocks from 10 (the span given is not rewritten).
    expect(compactIntoSpans(last, [row(A, 30, 7, 7, false)], { maxBlocks: 20, maxMarks: 10 })).toMatchObject([
      { fromBlock: 30, firstSeq: 7 },
    ]);
  });
});
