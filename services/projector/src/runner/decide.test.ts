import { createLogger } from '@vault-yield/common';
import type { LogBatch } from '@vault-yield/log';
import type { DeadLetterRow, RunnerTx } from '@vault-yield/store';
import { describe, expect, it } from 'vitest';
import { runBatch } from './batch.js';
import { runStreams } from './decide.js';
import { NO_HEAD, type SequencedRecord, type StreamProjection, type StreamState } from './streams.js';

/**
 * The runner's decisions over keyed, numbered streams, with a projection of its own (records as
 * JSON; applying one appends it to its stream) and the runner's part of a transaction in memory:
 * every decision is the runner's, whatever the projection.
 */

type Rec = SequencedRecord & { key: string; id: string; refuse?: boolean; bad?: boolean };
type Dec = { ok: true; rec: Rec } | { ok: false; reason: string };
type Work = StreamState & { key: string; applied: Rec[] };

/** What the store holds: per stream its applied records, number and hold; dead letters; the offset. */
interface Db {
  streams: Map<string, { lastSeq: number | null; held: boolean; applied: Rec[] }>;
  letters: (DeadLetterRow & { id: number })[];
  offset: string | null;
}

const log = createLogger({ name: 'decide-test', level: 'silent' });
const rec = (key: string, seq: number | undefined, block: number, more: Partial<Rec> = {}): Rec =>
  ({ key, seq, id: `${key}#${block}`, type: 'mark', payload: {}, blockNumber: block, ...more }) as Rec;
const revert = (key: string, seq: number, fromBlock: number, block: number): Rec =>
  rec(key, seq, block, { type: 'revert', payload: { fromBlock, orphanedBlockHashes: [] } } as Partial<Rec>);
const at = (r: Rec) => ({ blockNumber: r.blockNumber, txIndex: 0, logIndex: 0 });

function fakeTx(db: Db): RunnerTx {
  let nextId = db.letters.length + 1;
  const tx: Partial<RunnerTx> = {
    lockPartitionAt: async () => ({ offset: db.offset, epoch: '0' }),
    async savePartition(o) {
      db.offset = o.nextOffset;
    },
    insertDeadLetters: async (rows) => void db.letters.push(...rows.map((r) => ({ ...r, id: nextId++ }))),
    async deleteDeadLetters(ids) {
      db.letters = db.letters.filter((l) => !ids.includes(l.id));
    },
    lockHeld: async (keys) =>
      db.letters.filter((l) => l.kind === 'gap' && keys.includes(l.vault!)).sort((a, b) => a.seq! - b.seq!),
    noteCommit: async () => null,
  };
  return tx as RunnerTx;
}

function projection(db: Db): StreamProjection<Dec, Rec, Work, string[], RunnerTx> {
  return {
    streamOf: (d) => d.rec.key,
    placeOf: (d) => ({ position: at(d.rec), revert: d.rec.type === 'revert' }),
    complete: (d) => (d.rec.bad ? { ok: false, reason: 'bad body' } : { ok: true, record: d.rec }),
    decode: (value) => (value ? (JSON.parse(value.toString()) as Rec) : undefined),
    identity: (r) => r.id,
    position: at,
    isRevert: (r) => r.type === 'revert',
    voids: (rev, r) => r.blockNumber >= (rev.payload as { fromBlock: number }).fromBlock,
    async open(_tx, keys) {
      const streams = new Map<string, Work>();
      for (const key of keys) {
        const s = db.streams.get(key) ?? { lastSeq: null, held: false, applied: [] };
        const last = s.applied.at(-1);
        const storedHead = last ? at(last) : NO_HEAD;
        streams.set(key, { ...s, key, applied: [...s.applied], storedHead, seen: new Set(), changed: false });
      }
      const out: string[] = [];
      return {
        streams,
        hasState: (w) => w.applied.length > 0,
        known: async (suspects) =>
          new Set(
            suspects
              .filter((d) => db.streams.get(d.rec.key)?.applied.some((a) => a.id === d.rec.id))
              .map((d) => d.rec.id),
          ),
        apply(w, r) {
          if (r.refuse) return { kind: 'fold', reason: 'refused', crashed: false };
          w.applied.push(r);
          out.push(r.id);
          return null;
        },
        async revert(w, r) {
          const kept = w.applied.filter(
            (a) => !(a.blockNumber >= (r.payload as { fromBlock: number }).fromBlock),
          );
          const reverted = kept.length < w.applied.length;
          w.applied = kept;
          return { reverted, refolded: kept };
        },
        async close(counts) {
          for (const w of streams.values())
            db.streams.set(w.key, { lastSeq: w.lastSeq, held: w.held, applied: w.applied });
          return { out: [...out, JSON.stringify(counts)] };
        },
      };
    },
  };
}

/** Runs `recs` as one batch from `db`'s stored offset; returns what was applied and the counts. */
async function run(db: Db, recs: readonly Rec[]) {
  const from = Number(db.offset ?? '0');
  const batch: LogBatch<Dec> = {
    topic: 't',
    partition: 0,
    messages: recs.map((r, i) => ({
      partition: 0,
      offset: String(from + i),
      key: Buffer.from(r.key),
      value: Buffer.from(JSON.stringify(r)),
      timestamp: 0,
      decoded: { ok: true, rec: r },
    })),
    commit: { groupId: 'g', topic: 't', partition: 0, nextOffset: String(from + recs.length) },
    highWatermark: String(from + recs.length),
  };
  const r = await runBatch(fakeTx(db), batch, runStreams(projection(db), log));
  if (r.kind !== 'applied' || !r.out) throw new Error('nothing applied');
  return { applied: r.out.slice(0, -1), counts: JSON.parse(r.out.at(-1)!), letters: r.letters };
}

const empty = (): Db => ({ streams: new Map(), letters: [], offset: null });
const held = (db: Db) => db.letters.filter((l) => l.kind === 'gap').map((l) => l.seq);

describe('the runner decides which records of a stream are applied', () => {
  it('skips a number already reached, holds a gap and every later record, releases them in order once it is filled', async () => {
    const db = empty();
    const a = (seq: number) => rec('a', seq, seq * 10);
    expect((await run(db, [a(1), a(2), a(2), a(4), a(5)])).applied).toEqual(['a#10', 'a#20']);
    expect(held(db)).toEqual([4, 5]);
    expect(db.streams.get('a')).toMatchObject({ lastSeq: 2, held: true });
    const filled = await run(db, [a(1), a(3)]);
    expect(filled.applied).toEqual(['a#30', 'a#40', 'a#50']);
    expect(filled.counts).toEqual({ applied: 3, duplicates: 1, reverts: 0, released: 2 });
    expect(db.letters).toEqual([]);
    expect(db.streams.get('a')).toMatchObject({ lastSeq: 5, held: false });
  });

  it('a first record that is not number 1 is held; another stream goes on', async () => {
    const db = empty();
    const r = await run(db, [rec('a', 2, 20), rec('b', 1, 10)]);
    expect(r.applied).toEqual(['b#10']);
    expect(r.letters.map((l) => [l.vault, l.kind, l.seq, l.blockNumber])).toEqual([['a', 'gap', 2, 20]]);
  });

  it('an unnumbered copy is a duplicate: within the batch (seen), or stored at or below the stream head (known)', async () => {
    const db = empty();
    const u = (block: number) => rec('a', undefined, block);
    expect((await run(db, [u(1), u(2), u(1)])).applied).toEqual(['a#1', 'a#2']);
    const again = await run(db, [u(2), u(3), u(3)]);
    expect(again.applied).toEqual(['a#3']);
    expect(again.counts.duplicates).toBe(2);
  });

  it('a refused record is a dead letter of its kind and its number counts as reached', async () => {
    const db = empty();
    const r = await run(db, [
      rec('a', 1, 10),
      rec('a', 2, 20, { refuse: true }),
      rec('a', 3, 30),
      rec('a', 4, 40, { bad: true }),
    ]);
    expect(r.applied).toEqual(['a#10', 'a#30']);
    expect(r.letters.map((l) => [l.offset, l.kind, l.vault])).toEqual([
      ['1', 'fold', 'a'],
      ['3', 'decode', null], // a decode letter names the vault its key names (an address), as runBatch's
    ]);
    expect(db.streams.get('a')).toMatchObject({ lastSeq: 3, held: false });
  });

  it("names a letter's vault and chain by the projection's letterOf: a held record of one chain never holds the same address on another", async () => {
    const db = empty();
    // Streams `1:a` and `2:a`: the address `a` on chains 1 and 2 (the vault projection's vault ids).
    const letterOf = (key: string) => ({ vault: key.slice(2), chainId: Number(key[0]) });
    const tx = fakeTx(db);
    tx.lockHeld = async (keys) =>
      db.letters
        .filter((l) => l.kind === 'gap' && keys.some((k) => k === `${l.chainId}:${l.vault}`))
        .sort((a, b) => a.seq! - b.seq!);
    const runWith = async (recs: readonly Rec[]) => {
      const from = Number(db.offset ?? '0');
      const r = await runBatch(
        tx,
        {
          topic: 't',
          partition: 0,
          messages: recs.map((r, i) => ({
            partition: 0,
            offset: String(from + i),
            key: Buffer.from(r.key),
            value: Buffer.from(JSON.stringify(r)),
            timestamp: 0,
            decoded: { ok: true, rec: r },
          })),
          commit: { groupId: 'g', topic: 't', partition: 0, nextOffset: String(from + recs.length) },
          highWatermark: String(from + recs.length),
        },
        runStreams({ ...projection(db), letterOf }, log),
      );
      if (r.kind !== 'applied' || !r.out) throw new Error('nothing applied');
      return r;
    };
    const r = await runWith([rec('1:a', 1, 10), rec('2:a', 1, 10), rec('2:a', 3, 30), rec('1:a', 2, 20)]);
    expect(r.letters.map((l) => [l.vault, l.chainId, l.kind, l.seq])).toEqual([['a', 2, 'gap', 3]]);
    expect(db.streams.get('1:a')).toMatchObject({ lastSeq: 2, held: false });
    expect(db.streams.get('2:a')).toMatchObject({ lastSeq: 1, held: true });
    // Chain 1 goes on alone; chain 2's gap filled releases its held record, and only its.
    await runWith([rec('1:a', 3, 30)]);
    expect(db.streams.get('1:a')).toMatchObject({ lastSeq: 3, held: false });
    expect(db.letters.map((l) => [l.chainId, l.seq])).toEqual([[2, 3]]);
    await runWith([rec('2:a', 2, 20)]);
    expect(db.streams.get('2:a')).toMatchObject({ lastSeq: 3, held: false });
    expect(db.letters).toEqual([]);
  });

  it('a revert re-folds the stream and voids the held records of its orphaned blocks, stored and of the batch', async () => {
    const db = empty();
    await run(db, [rec('a', 1, 10), rec('a', 2, 20), rec('a', 5, 50)]);
    expect(held(db)).toEqual([5]);
    const r = await run(db, [rec('a', 6, 60), revert('a', 3, 20, 60)]);
    expect(r.counts).toMatchObject({ reverts: 1 });
    expect(db.letters).toEqual([]);
    expect(db.streams.get('a')).toMatchObject({ lastSeq: 3, held: false, applied: [{ id: 'a#10' }] });
  });
});
