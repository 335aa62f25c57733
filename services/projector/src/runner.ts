import type { DecodeResult, LazyRecord, RecordHead } from '@vault-yield/domain';
import type { LogBatch } from '@vault-yield/log';
import type { DeadLetterKind, DeadLetterRow, ProjectionTx } from '@vault-yield/store';

/**
 * The generic exactly-once runner (what Emmett keeps apart from its projections): it owns the
 * partition's offset row, the gap check, the skip of what was already applied and the dead
 * letters, and hands every decoded record at or above the stored offset, in log order, to a
 * projection that folds them into rows inside the same transaction. Exactly-once rests on:
 * (1) the offset row is locked first and only messages at or above the stored offset are applied,
 * the new offset being written in the same transaction; (2) the projection is a pure function of
 * each key's applied records, so rows do not depend on batch boundaries; (3) the projection
 * skips records whose identity it already holds (republished duplicates).
 */

/**
 * A message of the batch whose head decoded, as the projection gets it: the whole record is
 * decoded by `record()` when the projection folds it (and may still be refused then: a dead
 * letter of kind `decode`, as if the runner had refused it).
 */
export interface RunnerItem {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  head: RecordHead;
  record: () => DecodeResult;
}

/** A record the projection could not apply: it becomes a dead letter. */
export interface Refusal {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  vault: string | null;
  kind: DeadLetterKind;
  reason: string;
  /** The record's sequence number (held records: kind `gap`). */
  seq?: number | null;
  /** The record's block. */
  blockNumber?: number | null;
}

export interface ProjectionRun<Out> {
  refused: Refusal[];
  out: Out;
  /** After the batch's dead letters are stored, before the offset (e.g. flag what they leave behind). */
  finish?(tx: ProjectionTx, letters: readonly DeadLetterRow[]): Promise<void>;
}

export interface Projection<Out> {
  /** Called under the partition lock with the stored (offset, epoch): drop any cache that differs. */
  locked?(partition: number, offset: string, epoch: string): void;
  apply(tx: ProjectionTx, items: readonly RunnerItem[], partition: number): Promise<ProjectionRun<Out>>;
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
      /** The partition's epoch read under the lock (see ProjectionTx.lockPartitionAt). */
      epoch: string;
      /** null when the whole batch was below the stored offset (nothing applied). */
      out: Out | null;
    }
  | { kind: 'gap'; seekTo: string };

export const vaultOfKey = (key: Buffer | null): string | null => {
  const text = key?.toString('utf8').toLowerCase() ?? '';
  return /^0x[0-9a-f]{40}$/.test(text) ? text : null;
};

export async function runBatch<Out>(
  tx: ProjectionTx,
  batch: LogBatch<LazyRecord>,
  projection: Projection<Out>,
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
  const items: RunnerItem[] = [];
  for (const m of batch.messages) {
    if (BigInt(m.offset) < expected) {
      skipped++;
      continue;
    }
    if (!m.decoded.ok) {
      const vault = vaultOfKey(m.key);
      letters.push(
        letter({
          offset: m.offset,
          key: m.key,
          value: m.value,
          vault,
          kind: 'decode',
          reason: m.decoded.reason,
        }),
      );
      continue;
    }
    items.push({
      offset: m.offset,
      key: m.key,
      value: m.value,
      head: m.decoded.head,
      record: m.decoded.record,
    });
  }
  const run = await projection.apply(tx, items, commit.partition);
  for (const r of run.refused) letters.push(letter(r));
  letters.sort((a, b) => (BigInt(a.offset) < BigInt(b.offset) ? -1 : 1));
  await tx.insertDeadLetters(letters);
  await run.finish?.(tx, letters);
  await tx.savePartition(commit);
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
