import type { DeadLetterRow, PartitionOffset } from './rows.js';

/**
 * The exactly-once runner's part of a batch transaction, whatever the projection: the partition's
 * offset row and epoch, the dead letters (held records among them) and the commit's stream notice.
 * A projection's own writes come beside it in the same transaction (`VaultWrites` for the vault
 * projection; the strategy side's `StrategyTx`): the runner decides what is applied, they write it.
 */
export interface RunnerTx {
  /**
   * Locks the partition's offset row until commit and returns the stored next offset (null when
   * the partition was never applied). Two instances that both believe they own a partition
   * (a rebalance in flight) serialise here, and the second sees the first one's offset.
   */
  lockPartition(groupId: string, topic: string, partition: number): Promise<string | null>;
  /**
   * `lockPartition`, plus the partition's epoch: bumped by anything that rewrites a vault of the
   * partition outside the consumers' batches (`bumpEpochs`: a dead-letter retry), so a cache of
   * fold states keyed by (offset, epoch) is dropped when it changes.
   */
  lockPartitionAt(
    groupId: string,
    topic: string,
    partition: number,
  ): Promise<{ offset: string | null; epoch: string }>;
  /** Locks every group's offsets row of the partition and bumps its epoch (see lockPartitionAt). */
  bumpEpochs(topic: string, partition: number): Promise<void>;
  /**
   * Stores the partition's next offset and how far it has been folded (`folded_to`: the latest
   * block time among the snapshots this transaction wrote, never moving back), and names the
   * partition as the one of each vault whose snapshot this transaction wrote (migration 0024):
   * a vault's realised figures count up to how far its partition was folded.
   */
  savePartition(offset: PartitionOffset): Promise<void>;
  /**
   * Locks and returns dead letters for a retry, in log order: the one `id`, or all of them
   * (`for update`: two retries never re-apply the same letter).
   */
  lockDeadLetters(id?: number): Promise<(DeadLetterRow & { id: number })[]>;
  /** Stores the batch's dead letters (a letter already stored at its offset is kept). */
  insertDeadLetters(rows: readonly DeadLetterRow[]): Promise<void>;
  /** Deletes dead letters by id (applied at last: released, retried, or voided by a revert). */
  deleteDeadLetters(ids: readonly number[]): Promise<void>;
  /**
   * Locks (`for update`) and returns the held records (dead letters of kind `gap`) of these
   * vaults (vault ids: `eip155:{chainId}:{address}`), in sequence order.
   */
  lockHeld(ids: readonly string[]): Promise<(DeadLetterRow & { id: number })[]>;
  /**
   * The batch's last write: numbers this commit in `stream_commits` (migration 0021) under a
   * transaction advisory lock held to the commit, so numbers commit in order, and sends ONE
   * `NOTIFY` on STREAM_CHANNEL (delivered after the commit): `{"schema","seq","vaults"}` (vault
   * ids, as `vaults` are given: `eip155:{chainId}:{address}`; stored so in stream_commits), or
   * `{"schema","seq","count"}` when the vault list would not fit a notification. Readers never
   * trust the payload for content: they read the commits after their cursor. The ids of the
   * ledger rows deleteOrphaned removed in this transaction go with it (`retracted`, migration
   * 0022). Returns the number (null: no vault touched, nothing written or sent).
   */
  noteCommit(vaults: Iterable<string>): Promise<string | null>;
}
