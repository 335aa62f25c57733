import type { LogBatch } from '@vault-yield/log';
import type { DeadLetterRow, PartitionOffset, ProjectionTx } from '@vault-yield/store';
import { describe, expect, it } from 'vitest';
import { type Projection, runBatch } from './index.js';

/** A decoder of its own: numbers as text; anything else refused. */
type Num = { ok: true; n: number } | { ok: false; reason: string };
const decodeNum = (value: Buffer | null): Num => {
  const n = Number(value?.toString('utf8'));
  return Number.isInteger(n) ? { ok: true, n } : { ok: false, reason: `not a number: ${value}` };
};

/** The runner's part of a transaction, in memory: one offsets row, the dead letters, what was written in order. */
function fakeTx(stored: string | null) {
  const calls: string[] = [];
  const letters: DeadLetterRow[] = [];
  let saved: PartitionOffset | null = null;
  const tx = {
    async lockPartitionAt() {
      calls.push('lock');
      return { offset: stored, epoch: '7' };
    },
    async insertDeadLetters(rows: readonly DeadLetterRow[]) {
      calls.push('letters');
      letters.push(...rows);
    },
    async savePartition(o: PartitionOffset) {
      calls.push('save');
      saved = o;
    },
  };
  return { tx: tx as unknown as ProjectionTx, calls, letters, saved: () => saved };
}

function batchOf(values: readonly string[], from: number): LogBatch<Num> {
  return {
    topic: 't',
    partition: 3,
    messages: values.map((v, i) => ({
      partition: 3,
      offset: String(from + i),
      key: null,
      value: Buffer.from(v),
      timestamp: 0,
      decoded: decodeNum(Buffer.from(v)),
    })),
    commit: { groupId: 'g', topic: 't', partition: 3, nextOffset: String(from + values.length) },
    highWatermark: String(from + values.length),
  };
}

/** Sums what it is handed; refuses odd numbers (a dead letter of kind `fold`). */
function summing(calls: string[]): Projection<Num, number> {
  return {
    locked: (partition, offset, epoch) => calls.push(`locked ${partition} ${offset}@${epoch}`),
    async apply(_tx, items) {
      calls.push(`apply ${items.map((i) => i.offset).join(',')}`);
      let sum = 0;
      const refused = [];
      for (const { offset, key, value, decoded } of items)
        if (decoded.n % 2 === 0) sum += decoded.n;
        else refused.push({ offset, key, value, vault: null, kind: 'fold' as const, reason: 'odd' });
      return { refused, out: sum, finish: async () => void calls.push('finish') };
    },
  };
}

describe('the exactly-once runner, whatever the projection decodes', () => {
  it('a batch that starts past the stored offset is a gap: nothing applied, re-read from the stored offset', async () => {
    const f = fakeTx('4');
    const r = await runBatch(f.tx, batchOf(['2'], 6), summing(f.calls));
    expect(r).toEqual({ kind: 'gap', seekTo: '4' });
    expect(f.calls).toEqual(['lock', 'locked 3 4@7']);
  });

  it('skips what was applied, dead-letters what does not decode or the projection refuses, then saves the offset', async () => {
    const f = fakeTx('2');
    const r = await runBatch(f.tx, batchOf(['10', '20', '4', 'x', '3', '6'], 1), summing(f.calls));
    expect(r).toEqual({
      kind: 'applied',
      skipped: 1,
      deadLetters: { decode: 1, envelope: 0, fold: 1, gap: 0 },
      letters: f.letters,
      nextOffset: '7',
      epoch: '7',
      out: 30,
    });
    expect(f.letters.map((l) => [l.offset, l.kind, l.topic, l.partition])).toEqual([
      ['4', 'decode', 't', 3],
      ['5', 'fold', 't', 3],
    ]);
    expect(f.calls).toEqual(['lock', 'locked 3 2@7', 'apply 2,3,5,6', 'letters', 'finish', 'save']);
    expect(f.saved()).toEqual({ groupId: 'g', topic: 't', partition: 3, nextOffset: '7' });
  });

  it('a batch wholly below the stored offset applies and saves nothing', async () => {
    const f = fakeTx('9');
    const r = await runBatch(f.tx, batchOf(['2', '4'], 0), summing(f.calls));
    expect(r).toMatchObject({ kind: 'applied', skipped: 2, nextOffset: '9', out: null, letters: [] });
    expect(f.calls).toEqual(['lock', 'locked 3 9@7']);
  });

  it('a partition never applied starts at offset 0', async () => {
    const f = fakeTx(null);
    expect(await runBatch(f.tx, batchOf(['2'], 1), summing(f.calls))).toEqual({ kind: 'gap', seekTo: '0' });
    const r = await runBatch(f.tx, batchOf(['2'], 0), summing(f.calls));
    expect(r).toMatchObject({ kind: 'applied', skipped: 0, nextOffset: '1', out: 2 });
  });
});
