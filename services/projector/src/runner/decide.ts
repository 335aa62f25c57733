import type { Logger } from '@vault-yield/common';
import { checkSeq, nextSeqPosition } from '@vault-yield/domain';
import { comparePosition, type DeadLetterRow, type RunnerTx } from '@vault-yield/store';
import {
  type Accepted,
  type Decoding,
  type Projection,
  type Refusal,
  type RunnerItem,
  vaultOfKey,
} from './batch.js';
import {
  NO_HEAD,
  type SequencedRecord,
  type StreamBatch,
  type StreamCounts,
  type StreamLetter,
  type StreamProjection,
  type StreamState,
  type Whole,
} from './streams.js';

/**
 * Where it is decided whether a record of a keyed stream is applied (the vault records: one
 * stream per vault, numbered by the indexer). The runner turns a stream projection — a
 * declaration of how to read, fold and write its records — into a projection `runBatch` feeds,
 * and decides, record by record, in each stream's order:
 *  - a record that does not decode whole: a dead letter of kind `decode`;
 *  - its number at or below the stream's last one: a duplicate, skipped (`checkSeq`);
 *  - a number past the next one: a gap — held (a dead letter of kind `gap`), the stream with it,
 *    never folded past; held records are released, in number order, once the gap is filled;
 *  - a revert: applied by the projection, then the held records of the orphaned blocks are void;
 *  - an unnumbered record already applied (this transaction's `seen`, or stored: at or below the
 *    stream's stored head and `known` to the projection): a duplicate, skipped;
 *  - else the projection applies it; a record it refuses is a dead letter of its kind.
 * Offsets, the skip of what was applied before and the dead letters' storing are `runBatch`'s.
 */

/** The projection `runBatch` feeds: `p`'s streams, each record decided as said above. */
export function runStreams<
  D extends Decoding,
  R extends SequencedRecord,
  W extends StreamState,
  Out,
  Tx extends RunnerTx,
>(p: StreamProjection<D, R, W, Out, Tx>, log: Logger): Projection<D, Out, Tx> {
  return {
    locked: p.locked?.bind(p),
    async apply(tx, items, partition) {
      const byStream = new Map<string, RunnerItem<D>[]>();
      for (const item of items) {
        const key = p.streamOf(item.decoded);
        let list = byStream.get(key);
        if (!list) {
          list = [];
          byStream.set(key, list);
        }
        list.push(item);
      }
      const batch = await p.open(tx, [...byStream.keys()], partition);
      const state = (key: string) => batch.streams.get(key) as W;
      const suspects: Accepted<D>[] = [];
      for (const [key, list] of byStream) {
        const w = state(key);
        for (const { decoded } of list) {
          const at = p.placeOf(decoded);
          if (!at.revert && comparePosition(at.position, w.storedHead) <= 0) suspects.push(decoded);
        }
      }
      const known = await batch.known(suspects);
      const c: Decisions = { p, batch, tx, known, log, refused: [], counts: newCounts() };
      for (const [key, list] of byStream) await decideStream(c, key, state(key), list);
      const closed = await batch.close(c.counts);
      return { refused: c.refused, ...closed };
    },
  };
}

/** What `step` did with a record: done with, held at a gap, or a revert to apply (`applyRevert`). */
type Stepped = 'done' | 'held' | { revert: SequencedRecord };

/** A message as a dead letter would keep it. */
type Message = Pick<Refusal, 'offset' | 'key' | 'value'>;

/** A held record and where it is held: a stored letter (`id`) or this batch's refusal (`here`). */
interface Pending {
  seq: number;
  msg: Message;
  record: SequencedRecord;
  id?: number;
  here?: Refusal;
}

/**
 * One batch's decisions so far (`refused`, `counts`) and what they read: the projection, its open
 * batch, the transaction, the identities the store holds among the batch's records.
 */
interface Decisions {
  p: StreamProjection<Decoding, SequencedRecord, StreamState, unknown, RunnerTx>;
  batch: StreamBatch<Decoding, SequencedRecord, StreamState, unknown, RunnerTx>;
  tx: RunnerTx;
  known: ReadonlySet<string>;
  log: Logger;
  refused: Refusal[];
  counts: StreamCounts;
}

const newCounts = (): StreamCounts => ({ applied: 0, duplicates: 0, reverts: 0, released: 0 });

const seqAt = (c: Decisions, w: StreamState) => ({ lastSeq: w.lastSeq, hasState: c.batch.hasState(w) });

/** The vault a dead letter of stream `key` names (StreamProjection.letterOf). */
const letterOf = (c: Decisions, key: string): StreamLetter =>
  c.p.letterOf ? c.p.letterOf(key) : { vault: key, chainId: null };

/** Whether `f` is a held record of stream `key` (`l`: the stream's letter, `letterOf`). */
const heldOf = (f: Refusal, l: StreamLetter) =>
  f.kind === 'gap' && f.vault === l.vault && (f.chainId ?? null) === l.chainId;

/** A stream's records of the batch, in order; then what they let out of the hold. */
async function decideStream(
  c: Decisions,
  key: string,
  w: StreamState,
  list: readonly RunnerItem<Decoding>[],
): Promise<void> {
  const wasHeld = w.held;
  const before = w.lastSeq;
  // A stream never applied has no snapshot to say `held`: its letters are looked for.
  const unknown = !c.batch.hasState(w) && w.lastSeq === null;
  const heldHere: Refusal[] = [];
  for (const item of list) {
    const msg = { offset: item.offset, key: item.key, value: item.value };
    // The whole record, decoded now: it dies young, with the fold's own garbage.
    const s = step(c, key, w, msg, c.p.complete(item.decoded), (f) => heldHere.push(f));
    if (typeof s !== 'object') continue;
    await applyRevert(c, key, w, s.revert);
    // What the revert voided is no longer held.
    for (let i = heldHere.length - 1; i >= 0; i--)
      if (!c.refused.includes(heldHere[i]!)) heldHere.splice(i, 1);
  }
  // The gap may be filled now (a republished record): apply what was held, in order.
  if ((wasHeld || unknown || heldHere.length > 0) && w.lastSeq !== before)
    c.counts.released += await release(c, key, w, wasHeld || unknown, heldHere);
}

/**
 * One record of a stream, live or released from the hold (the decisions listed at the top).
 * Synchronous: no promise a record (the usual record needs no I/O).
 */
function step(
  c: Decisions,
  key: string,
  w: StreamState,
  msg: Message,
  whole: Whole<SequencedRecord>,
  held?: (f: Refusal) => void,
): Stepped {
  if (!whole.ok) {
    // The letter names the vault its key names (an address), as runBatch's; its chain is the
    // stream's (the head decoded) when the key is the stream's vault.
    const l = letterOf(c, key);
    const vault = vaultOfKey(msg.key);
    const chainId = vault !== null && vault === l.vault ? l.chainId : null;
    c.refused.push({ ...msg, vault, chainId, kind: 'decode', reason: whole.reason });
    return 'done';
  }
  const r = whole.record;
  const verdict = checkSeq(seqAt(c, w), r);
  if (verdict === 'duplicate') {
    c.counts.duplicates++;
    return 'done';
  }
  if (verdict === 'gap') {
    held?.(hold(c, key, w, msg, r));
    return 'held';
  }
  if (c.p.isRevert(r)) return { revert: r };
  const after = nextSeqPosition(seqAt(c, w), r);
  const id = c.p.identity(r);
  if (
    (r.seq === undefined && w.seen.has(id)) ||
    (comparePosition(c.p.position(r), w.storedHead) <= 0 && c.known.has(id))
  ) {
    c.counts.duplicates++;
    return 'done';
  }
  // A refused record is in dead letters, not lost: its number counts as reached.
  w.lastSeq = after;
  const no = c.batch.apply(w, r, msg.value, id);
  if (no) {
    // Its number is reached: the snapshot row (which keeps last_seq) must be written even
    // when nothing else of the stream is in the batch, or the next batch reloads the number
    // before it and holds every later record behind a gap that is not there.
    w.changed = w.changed || c.batch.hasState(w);
    // Loud: a dead letter leaves the vault behind until it is retried.
    c.log.error(
      { vault: key, offset: msg.offset, kind: no.kind, reason: no.reason },
      no.crashed
        ? 'fold threw a non-FoldError: record dead-lettered'
        : 'record breaks the log rules: dead-lettered',
    );
    const { kind, reason } = no;
    c.refused.push({
      ...msg,
      ...letterOf(c, key),
      kind,
      reason,
      seq: r.seq ?? null,
      blockNumber: r.blockNumber,
    });
    return 'done';
  }
  // A numbered record's copy is caught by its number (checkSeq); only unnumbered ones need the set.
  if (r.seq === undefined) w.seen.add(id);
  c.counts.applied++;
  return 'done';
}

/** Holds `r` behind the gap before it: never fold past a lost record (nor, by the same check, any later one). */
function hold(c: Decisions, key: string, w: StreamState, msg: Message, r: SequencedRecord): Refusal {
  if (!w.held)
    c.log.error(
      { vault: key, offset: msg.offset, lastSeq: w.lastSeq, seq: r.seq },
      'gap in the vault stream: vault held until the missing records arrive (vault-yield republish)',
    );
  const reason = `gap: seq ${r.seq} after ${w.lastSeq ?? 'none'}; missing ${(w.lastSeq ?? 0) + 1}..${(r.seq ?? 0) - 1}`;
  const f: Refusal = {
    ...msg,
    ...letterOf(c, key),
    kind: 'gap',
    reason,
    seq: r.seq ?? null,
    blockNumber: r.blockNumber,
  };
  c.refused.push(f);
  w.held = true;
  w.changed = true;
  return f;
}

/** A revert `step` gave back: the projection applies it, then what it voids is no longer held. */
async function applyRevert(c: Decisions, key: string, w: StreamState, r: SequencedRecord): Promise<void> {
  const after = nextSeqPosition(seqAt(c, w), r);
  const { reverted, refolded } = await c.batch.revert(w, r);
  if (reverted) c.counts.reverts++;
  if (refolded) {
    // The stream's whole history is now known in memory: no lookups in the store for it.
    w.seen = new Set(refolded.filter((x) => x.seq === undefined).map((x) => c.p.identity(x)));
    w.storedHead = NO_HEAD;
  }
  // A vault created in the orphaned blocks is gone: if the canonical chain creates it
  // again, the indexer numbers it from 1 (its registry entry went with the rewind).
  w.lastSeq = c.batch.hasState(w) ? after : null;
  w.changed = w.changed || c.batch.hasState(w);
  await dropVoided(c, key, w, r);
}

/**
 * Records of the orphaned blocks held behind a gap are void with them (stored letters and this
 * batch's alike): kept, they would hold the vault for ever — for a vault born there, one with no
 * state left, no number could ever reach them.
 */
async function dropVoided(c: Decisions, key: string, w: StreamState, r: SequencedRecord): Promise<void> {
  const isVoid = (value: Buffer | null) => {
    if (!value) return false;
    const d = c.p.decode(value);
    return d !== undefined && !c.p.isRevert(d) && c.p.voids(r, d);
  };
  const letters = await c.tx.lockHeld([key]);
  const gone = letters.filter((l) => isVoid(l.value)).map((l) => l.id);
  await c.tx.deleteDeadLetters(gone);
  let dropped = gone.length;
  const l = letterOf(c, key);
  for (let i = c.refused.length - 1; i >= 0; i--) {
    const f = c.refused[i]!;
    if (heldOf(f, l) && isVoid(f.value)) {
      c.refused.splice(i, 1);
      dropped++;
    }
  }
  if (dropped === 0) return;
  w.held = letters.length > gone.length || c.refused.some((f) => heldOf(f, l));
  w.changed = w.changed || c.batch.hasState(w);
  c.log.info({ vault: key, dropped, held: w.held }, 'revert: held records of the orphaned blocks dropped');
}

/** The stream's held records (stored, if `stored`, and this batch's), in number order. */
async function pendingOf(c: Decisions, key: string, stored: boolean, heldHere: readonly Refusal[]) {
  const letters: readonly (DeadLetterRow & { id: number })[] = stored ? await c.tx.lockHeld([key]) : [];
  const pending: Pending[] = [];
  const add = (m: Message, where: Pick<Pending, 'id' | 'here'>) => {
    const record = c.p.decode(m.value);
    if (record !== undefined && record.seq !== undefined)
      pending.push({
        seq: record.seq,
        msg: { offset: m.offset, key: m.key, value: m.value },
        record,
        ...where,
      });
  };
  for (const l of letters) add(l, { id: l.id });
  for (const h of heldHere) add(h, { here: h });
  return pending.sort((a, b) => a.seq - b.seq);
}

/** Applies the stream's held records that now follow its last number; the rest stay held. */
async function release(
  c: Decisions,
  key: string,
  w: StreamState,
  stored: boolean,
  heldHere: readonly Refusal[],
): Promise<number> {
  const pending = await pendingOf(c, key, stored, heldHere);
  const done: number[] = [];
  const gone = new Set<Refusal>();
  let released = 0;
  for (const h of pending) {
    const verdict = checkSeq(seqAt(c, w), h.record);
    if (verdict === 'gap') break;
    if (h.id !== undefined) done.push(h.id);
    if (h.here) gone.add(h.here);
    if (verdict === 'apply') {
      const s = step(c, key, w, h.msg, { ok: true, record: h.record });
      if (typeof s === 'object') await applyRevert(c, key, w, s.revert);
      released++;
    } else c.counts.duplicates++;
  }
  await c.tx.deleteDeadLetters(done);
  for (let i = c.refused.length - 1; i >= 0; i--) if (gone.has(c.refused[i]!)) c.refused.splice(i, 1);
  w.held = pending.some((h) => !(h.id !== undefined && done.includes(h.id)) && !(h.here && gone.has(h.here)));
  w.changed = w.changed || c.batch.hasState(w);
  if (released > 0)
    c.log.info({ vault: key, released, lastSeq: w.lastSeq, held: w.held }, 'gap filled: held records folded');
  return released;
}

/**
 * Whether dead letters a retry re-applies (`vault-yield dead-letters retry`) may be applied to the
 * stream `key` at `at`: their numbers, with what the stream reached, must leave none missing — a
 * retry never folds past a gap (held records are retried once the missing ones arrived, and the
 * runner releases those by itself). Then the stream's last number after them.
 */
export function retriedFollow(
  key: string,
  at: { lastSeq: number | null; hasState: boolean },
  records: readonly SequencedRecord[],
): { ok: true; lastSeq: number | null } | { ok: false; reason: string } {
  let last = at.lastSeq;
  const numbered = records.filter((r) => r.seq !== undefined);
  for (const r of numbered.sort((a, b) => a.seq! - b.seq!)) {
    if (checkSeq({ lastSeq: last, hasState: at.hasState || last !== null }, r) === 'gap')
      return {
        ok: false,
        reason: `records ${(last ?? 0) + 1}..${r.seq! - 1} of ${key} are still missing: republish them (vault-yield republish)`,
      };
    last = nextSeqPosition({ lastSeq: last, hasState: at.hasState }, r);
  }
  return { ok: true, lastSeq: last };
}
