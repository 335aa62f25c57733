import type { VaultRecord } from '@vault-yield/domain';
import { describe, expect, it } from 'vitest';
import { emptyMarkState, type VaultMarkState } from '../vaults.js';
import { assignSeqs, revertSeqs } from './sequence.js';

const A = `0x${'a'.repeat(40)}` as const;
const B = `0x${'b'.repeat(40)}` as const;
const rec = (vault: `0x${string}`, blockNumber: number) =>
  ({ vault, blockNumber, blockHash: `0x${blockNumber.toString(16).padStart(64, '0')}` }) as VaultRecord;

describe('record numbering', () => {
  it('numbers each vault from its state, in order, and reports the numbers per vault and block', () => {
    const states = new Map<string, VaultMarkState>([
      [A, emptyMarkState()],
      [B, { ...emptyMarkState(), nextSeq: 41 }],
    ]);
    const records = [rec(A, 10), rec(B, 10), rec(A, 10), rec(A, 11), rec(B, 12)];
    const rows = assignSeqs(records, (v) => states.get(v)!);
    expect(records.map((r) => r.seq)).toEqual([1, 41, 2, 3, 42]);
    expect(rows.map((r) => [r.vault, r.blockNumber, r.firstSeq, r.lastSeq])).toEqual([
      [A, 10, 1, 2],
      [B, 10, 41, 41],
      [A, 11, 3, 3],
      [B, 12, 42, 42],
    ]);
    expect(states.get(A)!.nextSeq).toBe(4);
    // No marks among them: every row is of events (compaction recounts them from the chain).
    expect(rows.map((r) => r.mark)).toEqual([false, false, false, false]);
    // A block whose one record is a mark says so; a mark after an event (never made) would not.
    const mark = { ...rec(A, 20), type: 'mark' } as VaultRecord;
    const marked = assignSeqs(
      [mark, rec(B, 20), { ...rec(B, 21), type: 'mark' } as VaultRecord, rec(B, 21)],
      (v) => states.get(v)!,
    );
    expect(marked.map((r) => [r.vault, r.blockNumber, r.lastSeq - r.firstSeq + 1, r.mark])).toEqual([
      [A, 20, 1, true],
      [B, 20, 1, false],
      [B, 21, 2, false],
    ]);
    // A state saved before schema 3 has no next number: 1.
    const legacy = { ...emptyMarkState() } as VaultMarkState;
    delete legacy.nextSeq;
    const r = [rec(A, 1)];
    assignSeqs(r, () => legacy);
    expect(r[0]!.seq).toBe(1);
  });

  it('a revert takes a number above every number of the orphaned blocks, published or only written ahead', () => {
    const row = (firstSeq: number, lastSeq: number) => ({
      vault: A,
      blockNumber: 5,
      blockHash: '0x',
      firstSeq,
      lastSeq,
    });
    // In memory: the orphaned records were numbered 11..13.
    const live = { ...emptyMarkState(), nextSeq: 14 };
    expect(revertSeqs(live, [row(11, 12), row(13, 13)])).toEqual({ seq: 14, fromSeq: 11 });
    expect(live.nextSeq).toBe(15);
    // After a crash: the state is the checkpoint's (11), the write-ahead rows know 11..13.
    const loaded = { ...emptyMarkState(), nextSeq: 11 };
    expect(revertSeqs(loaded, [row(11, 12), row(13, 13)])).toEqual({ seq: 14, fromSeq: 11 });
    // No rows (before schema 3): the next number, no fromSeq.
    expect(revertSeqs({ ...emptyMarkState(), nextSeq: 7 }, [])).toEqual({ seq: 7, fromSeq: undefined });
  });
});
