/** Rows the projector writes. Strings carry exact numerics (bigint, decimal); JSON goes as text. */

import type { EquityPoint } from '@vault-yield/domain';

/** A record's identity in the ledger (its primary key). */
export interface RecordKey {
  vault: string;
  chainId: number;
  blockHash: string;
  txHash: string;
  logIndex: number;
}

export interface LedgerRow extends RecordKey {
  blockNumber: number;
  txIndex: number;
  /** Unix ms (block time). */
  ts: number;
  type: string;
  /** Its payload as JSON text (the `payload` column, which the reader serves). */
  payload: string;
  /**
   * Its token amounts as people read them, JSON text of a LedgerAmount array (the `amounts`
   * column, migration 0018); absent for a row written without them (null in the table).
   */
  amounts?: string;
}

/** A row of equity_points: the domain's equity point as the fold's rule made it (one shape, defined there). */
export type EquityRow = EquityPoint;

/** Position in the vault's history: (block_number, tx_index, log_index). */
export interface LedgerPosition {
  blockNumber: number;
  txIndex: number;
  logIndex: number;
}

export interface SnapshotRow {
  /** The vault's address; with `chainId`, its identity. */
  vault: string;
  chainId: number;
  owner: string;
  strategy: string;
  status: string;
  /** SnapshotView JSON. */
  snapshot: string;
  /** The fold's serialised state JSON. */
  state: string;
  lastRecordId: string;
  recordsApplied: number;
  createdAt: number;
  updatedAt: number;
  head: LedgerPosition;
  /** Last sequence number folded (null: none, or only unsequenced records). */
  lastSeq: number | null;
  /** Records of the vault are held behind a gap (dead letters of kind `gap`). */
  held: boolean;
}

/** What the projector needs back to continue folding a vault. */
export interface StoredVault {
  chainId: number;
  /** The vault's address. */
  vault: string;
  /** The `state` column, parsed JSON. */
  state: unknown;
  recordsApplied: number;
  createdAt: number;
  lastRecordId: string;
  head: LedgerPosition;
  lastSeq: number | null;
  held: boolean;
}

export interface PositionRow {
  chainId: number;
  vault: string;
  positionId: string;
  pool: string;
  tickLower: number;
  tickUpper: number;
  liquidity: string;
  inRange: boolean;
  /** PositionView JSON. */
  view: string;
}

export interface DeadLetterRow {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  reason: string;
  /** The vault's address (the message key, or the record's vault) when known. */
  vault: string | null;
  /**
   * The vault's chain when the record decoded (null: it did not, or names no vault; the message
   * key is an address only). A vault is (chainId, vault).
   */
  chainId?: number | null;
  kind: DeadLetterKind;
  /** The record's sequence number (kind `gap`: the projector re-applies it in this order). */
  seq?: number | null;
  /** The record's block, when it decoded (status names where a held vault waits). */
  blockNumber?: number | null;
}

/**
 * Why a record is a dead letter: `decode` (not JSON, or fails the record schema), `envelope`
 * (decodes but breaks the log's rules: wrong vault, out of order, before its vault.created, …),
 * `fold` (the fold threw: a bug, fixed by a deploy and `vault-yield dead-letters retry`), `gap`
 * (held: a record of the vault's stream before it is missing; re-applied by the projector once
 * the missing records arrive, e.g. after `vault-yield republish`).
 */
export type DeadLetterKind = 'decode' | 'envelope' | 'fold' | 'gap';

export interface PartitionOffset {
  groupId: string;
  topic: string;
  partition: number;
  nextOffset: string;
}
