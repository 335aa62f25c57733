import type { LogBatch } from '@vault-yield/log';
import type { DeadLetterKind, DeadLetterRow, RunnerTx } from '@vault-yield/store';

/**
 * The exactly-once runner's batch (what Emmett keeps apart from its projections), one for every
 * projection whatever it decodes (vault records, the strategy side's screens and catalogues): it
 * owns the partition's offset row, the skip of what was already applied, the dead letters and the
 * commit's stream notice, and hands every decoded message at or above the stored offset, in log
 * order, to a projection that applies them inside the same transaction. Exactly-once rests on:
 * (1) the offset row is locked first and only messages at or above the stored offset are applied,
 * the new offset being written in the same transaction; (2) the projection is a pure function of
 * each key's applied records, so rows do not depend on batch boundaries; (3) records already
 * applied are skipped by their number or identity (republished duplicates: streams.ts).
 */

/**
 * What a projection's decoder makes of one message (its consumer's `decode`): accepted, with what
 * it decoded, or refused with a reason — a dead letter of kind `decode`, written by the runner.
 */
export type Decoding = { ok: true } | { ok: false; reason: string };

/** The accepted forms of a decoding. */
export type Accepted<D extends Decoding> = Extract<D, { ok: true }>;

/**
 * A message of the batch that decoded, as the projection gets it. A projection may still refuse
 * it (e.g. vault records decode their head first and the rest as they are folded: a dead letter
 * of kind `decode` then, as if the runner had refused it).
 */
export interface RunnerItem<D extends Decoding> {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  decoded: Accepted<D>;
}

/** A record the projection could not apply: it becomes a dead letter. */
export interface Refusal {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  /** The vault's address (a dead letter's `vault`). */
  vault: string | null;
  /** The vault's chain, when the record decoded far enough to say (a vault is both). */
  chainId?: number | null;
  kind: DeadLetterKind;
  reason: string;
  /** The record's sequence number (held records: kind `gap`). */
  seq?: number | null;
  /** The record's block. */
  blockNumber?: number | null;
}

export interface ProjectionRun<Out, Tx extends RunnerTx = RunnerTx> {
  refused: Refusal[];
  out: Out;
  /** After the batch's dead letters are stored, before the offset (e.g. flag what they leave behind). */
  finish?(tx: Tx, letters: readonly DeadLetterRow[]): Promise<void>;
  /** The keys (vault ids) whose rows readers are told of once the batch commits (RunnerTx.noteCommit). */
  notify?: ReadonlySet<string> | ReadonlyMap<string, unknown>;
}

/**
 * A projection, as the runner feeds it: `D` what its decoder makes of a message, `Out` what a
 * batch reports, `Tx` the store's transaction it writes through (its `RunnerTx` part is the
 * runner's: offsets, dead letters, the stream notice). The strategy side is one; the vault
 * projection is a stream projection (streams.ts) the runner makes one of.
 */
export interface Projection<D extends Decoding, Out, Tx extends RunnerTx = RunnerTx> {
  /** Called under the partition lock with the stored (offset, epoch): drop any cache that differs. */
  locked?(partition: number, offset: string, epoch: string): void;
  apply(tx: Tx, items: readonly RunnerItem<D>[], partition: number): Promise<ProjectionRun<Out, Tx>>;
}

export type RunResult<Out> =
  | {
      kind: 'applied';
      /** Messages below the stored offset (already applied). */
      skipped: number;
      deadLetters: Record<DeadLetterKind, number>;
      letters: readonly DeadLetterRow[];
      /** The partition's stored offset once this transaction commits. */
      nextOffset: string;
      /** The partition's epoch read under the lock (see RunnerTx.lockPartitionAt). */
      epoch: string;
      /** null when the whole batch was below the stored offset (nothing applied). */
      out: Out | null;
    }
  | { kind: 'gap'; seekTo: string };

/**
 * The vault address a message's key names (vault records are keyed by the bare address, for
 * partitioning: the record's `chainId` and `vault` are its vault's identity); null for any other key.
 */
export const vaultOfKey = (key: Buffer | null): string | null => {
  const text = key?.toString('utf8').toLowerCase() ?? '';
  return /^0x[0-9a-f]{40}$/.test(text) ? text : null;
};

/** Runs one batch of a partition through `projection` inside `tx` (the caller commits it). */
export async function runBatch<D extends Decoding, Out, Tx extends RunnerTx>(
  tx: Tx,
  batch: LogBatch<D>,
  projection: Projection<D, Out, Tx>,
): Promise<RunResult<Out>> {
  const { commit } = batch;
  const stored = await tx.lockPartitionAt(commit.groupId, commit.topic, commit.partition);
  const expected = BigInt(stored.offset ?? '0');
  projection.locked?.(commit.partition, expected.toString(), stored.epoch);
  const first = BigInt(batch.messages[0]?.offset ?? '0');
  if (first > expected) return { kind: 'gap', seekTo: expected.toString() };

  const deadLetters: Record<DeadLetterKind, number> = { decode: 0, envelope: 0, fold: 0, gap: 0 };
  if (BigInt(commit.nextOffset) <= expected) {
    return {
      kind: 'applied',
      skipped: batch.messages.length,
      deadLetters,
      letters: [],
      nextOffset: expected.toString(),
      epoch: stored.epoch,
      out: null,
    };
  }
  let skipped = 0;
  const letters: DeadLetterRow[] = [];
  const letter = (r: Refusal): DeadLetterRow => {
    deadLetters[r.kind]++;
    return { topic: commit.topic, partition: commit.partition, ...r };
  };
  const items: RunnerItem<D>[] = [];
  for (const m of batch.messages) {
    if (BigInt(m.offset) < expected) {
      skipped++;
      continue;
    }
    const decoded: Decoding = m.decoded;
    if (!decoded.ok) {
      const vault = vaultOfKey(m.key);
      letters.push(
        letter({
          offset: m.offset,
          key: m.key,
          value: m.value,
          vault,
          // Undecoded: no chain is known (the key is an address only).
          chainId: null,
          kind: 'decode',
          reason: decoded.reason,
        }),
      );
      continue;
    }
    items.push({ offset: m.offset, key: m.key, value: m.value, decoded: m.decoded as Accepted<D> });
  }
  const run = await projection.apply(tx, items, commit.partition);
  for (const r of run.refused) letters.push(letter(r));
  letters.sort((a, b) => (BigInt(a.offset) < BigInt(b.offset) ? -1 : 1));
  await tx.insertDeadLetters(letters);
  await run.finish?.(tx, letters);
  await tx.savePartition(commit);
  // The transaction's last write: one notification for the batch (live streams, migration 0021).
  if (run.notify && run.notify.size > 0) await tx.noteCommit(run.notify.keys());
  return {
    kind: 'applied',
    skipped,
    deadLetters,
    letters,
    nextOffset: commit.nextOffset,
    epoch: stored.epoch,
    out: run.out,
  };
}
