import type { checkSeq } from '@vault-yield/domain';
import type { LedgerPosition, RunnerTx } from '@vault-yield/store';
import type { Accepted, Decoding, ProjectionRun } from './batch.js';

/**
 * Stream projections: projections of keyed, numbered streams (the vault records: one stream per
 * vault, numbered by the indexer), declared as how to read, fold and write their records.
 * `runStreams` (decide.ts) makes one a projection `runBatch` feeds, and decides there which of
 * its records are applied.
 */

/** What the runner reads of a stream's record: its number, whether it is a revert (`checkSeq`), its block. */
export type SequencedRecord = Parameters<typeof checkSeq>[1] & { blockNumber: number };

/** No position: a stream with nothing stored (every record is then new to the store). */
export const NO_HEAD: LedgerPosition = { blockNumber: -1, txIndex: -1, logIndex: -1 };

/**
 * The runner's bookkeeping of one stream, kept by the projection with its rows (the vault
 * snapshot stores `lastSeq` and `held`): the runner reads and moves it, the projection writes it.
 */
export interface StreamState {
  /** Last sequence number reached (null: none, or only unsequenced records). */
  lastSeq: number | null;
  /** Records of the stream are held behind a gap (dead letters of kind `gap`). */
  held: boolean;
  /** Records above this position cannot be stored already; at or below it, `known` decides. */
  storedHead: LedgerPosition;
  /**
   * Unnumbered records applied in this transaction (or, after a re-fold, the stream's whole
   * history's): a numbered record's copy is caught by its number, so it is not kept here.
   */
  seen: Set<string>;
  /** The stream's rows are to be written (its snapshot keeps `lastSeq` and `held`). */
  changed: boolean;
}

/** What a dead letter of a stream names: its vault's address and chain (see StreamProjection.letterOf). */
export interface StreamLetter {
  vault: string;
  chainId: number | null;
}

/** A whole record, or why the bytes are none. */
export type Whole<R> = { ok: true; record: R } | { ok: false; reason: string };

/** Why the projection refused a record it was handed: a dead letter of that kind. */
export interface ApplyRefusal {
  kind: 'envelope' | 'fold';
  reason: string;
  /** The fold threw something else than its own refusal (a bug): logged as such. */
  crashed: boolean;
}

/** What the runner decided in a batch, for its report. */
export interface StreamCounts {
  applied: number;
  duplicates: number;
  reverts: number;
  /** Held records (earlier batches' or this one's) applied once the gap before them was filled. */
  released: number;
}

/** One batch of a stream projection, opened by `open` inside the batch's transaction. */
export interface StreamBatch<D extends Decoding, R, W extends StreamState, Out, Tx extends RunnerTx> {
  /** The states of the batch's streams, by key. */
  streams: ReadonlyMap<string, W>;
  /** Whether the stream holds state (`checkSeq`: a first record of a stream with none must be number 1). */
  hasState(w: W): boolean;
  /** The identities, among these messages', of the records the store holds already. */
  known(suspects: readonly Accepted<D>[]): Promise<ReadonlySet<string>>;
  /** Applies a record the runner let through (synchronous: the usual record needs no I/O). */
  apply(w: W, r: R, raw: Buffer | null, id: string): ApplyRefusal | null;
  /**
   * Applies a revert: writes what is pending, removes what the revert orphans and re-folds the
   * stream. `reverted`: anything was removed; `refolded`: the records the stream was re-folded
   * from (null: no re-fold), its whole history from then on.
   */
  revert(w: W, r: R): Promise<{ reverted: boolean; refolded: readonly R[] | null }>;
  /** Writes what is pending and the streams' rows; what the batch reports. */
  close(counts: StreamCounts): Promise<Omit<ProjectionRun<Out, Tx>, 'refused'>>;
}

/**
 * A projection of keyed, numbered streams, as a declaration (Emmett's shape): how to read its
 * records, and `open`, which loads a batch's streams and applies what the runner lets through.
 */
export interface StreamProjection<
  D extends Decoding,
  R extends SequencedRecord,
  W extends StreamState,
  Out,
  Tx extends RunnerTx,
> {
  /** Called under the partition lock with the stored (offset, epoch): drop any cache that differs. */
  locked?(partition: number, offset: string, epoch: string): void;
  /** The stream of a message (a vault): its records are applied in order, each stream alone. */
  streamOf(decoded: Accepted<D>): string;
  /**
   * The vault (address and chain) a dead letter of stream `key` names: a held or refused record
   * is stored so (`dead_letters.vault`, `chain_id`). Default: the key itself, no chain.
   */
  letterOf?(key: string): StreamLetter;
  /** The place of a message's record, and whether it is a revert, from what was decoded first. */
  placeOf(decoded: Accepted<D>): { position: LedgerPosition; revert: boolean };
  /** The whole record (a decoder may decode a head first and the rest when it is applied). */
  complete(decoded: Accepted<D>): Whole<R>;
  /** A stored dead letter's bytes as a record (held records), or undefined. */
  decode(value: Buffer | null): R | undefined;
  identity(r: R): string;
  position(r: R): LedgerPosition;
  isRevert(r: R): boolean;
  /** Whether a revert voids a record (a record held behind a gap: it is dropped with the blocks). */
  voids(revert: R, r: R): boolean;
  open(tx: Tx, streams: readonly string[], partition: number): Promise<StreamBatch<D, R, W, Out, Tx>>;
}
