import type { CopyBuffer } from './copy.js';
import type { EquityRow, LedgerRow, PositionRow, RecordKey, SnapshotRow, StoredVault } from './rows.js';

/** What identifies a record body in the ledger (hashes lowercase, as stored). */
export interface BodyIdentity {
  chainId: number;
  blockHash: string;
  txHash: string;
  logIndex: number;
}

/** A record's identity and its place in the fold order (block, tx, log; then the identity). */
export interface RecordIdentity extends BodyIdentity {
  blockNumber: number;
  txIndex: number;
}

/** A record read back for a re-fold, with its body as stored (a subarray of its bundle). */
export interface StoredRecord<R> {
  record: R;
  body: Buffer;
}

/**
 * The vault projection's writes inside one batch transaction (ledger rows, record bundles, equity
 * points, snapshots, positions; a revert's deletes and the re-fold's reads). Every write is one
 * statement for the whole batch (COPY, or json_to_recordset over one JSON array: parsed in one
 * pass, its json fields kept as written), so a batch costs a fixed handful of round trips whatever
 * its size; only reverts (rare) read and write per vault.
 *
 * A vault is (chainId, address) (DESIGN §8): every vault these take or key by is a vault id,
 * `eip155:{chainId}:{address}` (`vaultId` of @vault-yield/domain; anything else throws), and
 * their SQL matches `chain_id` and `vault` together. Rows carry `chainId` beside the address.
 */
export interface VaultWrites {
  /** Deletes the vault's `balance.reconciled` ledger rows (a re-fold derives them again). */
  deleteReconciled(id: string): Promise<void>;
  /** The stored states of these vaults (by vault id), keyed by vault id; absent: none stored. */
  loadVaults(ids: readonly string[]): Promise<Map<string, StoredVault>>;
  /** The keys (of those given) already in the ledger. */
  existingRecords(keys: readonly RecordKey[]): Promise<RecordKey[]>;
  /** Inserts the rows, skipping any whose identity is already in the ledger (`on conflict do nothing`). */
  insertLedger(rows: readonly LedgerRow[]): Promise<number>;
  /** Sets the `amounts` of ledger rows by their identity (rows written before their fold knew them). */
  setLedgerAmounts(rows: readonly (RecordKey & { amounts: string })[]): Promise<void>;
  /**
   * COPYs the rows into the ledger: several times cheaper for Postgres than `insertLedger`, but
   * a row whose identity is already there fails the statement (and with it the transaction) with
   * a unique violation (see `isUniqueViolation`): only for rows known to be new.
   */
  copyLedger(rows: readonly LedgerRow[] | CopyBuffer<LedgerRow>): Promise<void>;
  /**
   * Stores the records' bodies: one bundle row per vault (keyed by vault id), its records as read from the log (either
   * encoding), each framed by its length, in log order. Re-folds read them back by identity.
   */
  copyBundles(bundles: ReadonlyMap<string, readonly Uint8Array[]>): Promise<void>;
  insertEquity(rows: readonly EquityRow[] | CopyBuffer<EquityRow>): Promise<void>;
  upsertSnapshots(rows: readonly SnapshotRow[]): Promise<void>;
  /** Deletes every row of these vaults' positions (by vault id), then inserts `rows`. */
  replacePositions(ids: readonly string[], rows: readonly PositionRow[]): Promise<void>;
  /**
   * Writes `behind` into the snapshot of each of these vaults (by vault id; and, `addresses`, the
   * vaults at these addresses on every chain) that has dead letters (their count, kinds and first
   * position; a letter of no known chain counts for its address on every chain); others keep the
   * fold's `behind: null`. Call after the snapshots.
   */
  markBehind(ids: readonly string[], addresses?: readonly string[]): Promise<void>;
  /**
   * Revert: deletes the vault's ledger rows at blockNumber ≥ fromBlock in the orphaned blocks. Their
   * ids are kept for this transaction's commit (noteCommit): streams that sent them retract them.
   */
  deleteOrphaned(id: string, fromBlock: number, blockHashes: readonly string[]): Promise<number>;
  /**
   * The vault's records in fold order, for a re-fold: the body of each of its ledger rows (matched
   * by identity, the latest body winning; throws when a row has none) and the records that have no
   * ledger row (`offLedger`: sequenced marks, migration 0013) from the bundles that are their
   * authority. `decode` returns undefined for bytes that are not a record.
   */
  vaultRecords<R extends RecordIdentity>(
    id: string,
    opts: { decode: (body: Buffer) => R | undefined; offLedger: (r: R) => boolean },
  ): Promise<StoredRecord<R>[]>;
  /**
   * Replaces the vault's bundles by one holding `bodies` (in fold order), the authority on its
   * marks: after a revert, what survives it (none: the vault's bundles are dropped).
   */
  rewriteBundles(id: string, bodies: readonly Uint8Array[]): Promise<void>;
  /** Removes a vault's derived rows (snapshot, positions, equity) before a re-fold rewrites them. */
  clearVault(id: string, opts: { snapshot: boolean }): Promise<void>;
}
