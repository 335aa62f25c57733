import type { RecordType, VaultRecord } from '@vault-yield/domain';
import type { Address, Hash, Hex, Log } from 'viem';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Record types that come from a chain log (not synthesised by the indexer). */
export type ChainRecordType = Exclude<RecordType, 'mark' | 'revert'>;

/**
 * What one log determines of a vault record. The indexer completes it with `schemaVersion`,
 * `chainId`, `blockTimestamp` (block header) and `context` (valuation at the block).
 */
export type ChainRecord = DistributiveOmit<
  Extract<VaultRecord, { type: ChainRecordType }>,
  'schemaVersion' | 'chainId' | 'blockTimestamp' | 'context'
>;

/** The fields of a viem Log the decoder reads (any `Log` from getLogs / watch fits). */
export type RawLog = Pick<
  Log,
  | 'address'
  | 'topics'
  | 'data'
  | 'blockNumber'
  | 'blockHash'
  | 'transactionHash'
  | 'transactionIndex'
  | 'logIndex'
  | 'removed'
>;

/** Where a log sits: enough to dead-letter it with a pointer back to the chain. */
export interface LogRef {
  address: Address;
  topic0: Hex | null;
  blockNumber: number | null;
  blockHash: Hash | null;
  txHash: Hash | null;
  logIndex: number | null;
}

export interface LogPosition {
  blockNumber: number;
  blockHash: Hash;
  txHash: Hash;
  txIndex: number;
  logIndex: number;
}

/**
 * The chain events the indexer watches beside the vaults' own records (the glossary's *watched
 * events*): the pools' Swap and Mint, the feeds' AnswerUpdated, tokens leaving a vault, the
 * factory's FeedSet and RolesSet. They decide when a mark falls due (the price watch) and what is
 * followed; they value nothing (the block valuator reads the chain at the block).
 */
export type WatchedEvent =
  | (LogPosition & {
      kind: 'swap';
      pool: Address;
      sqrtPriceX96: string;
      tick: number;
      liquidity: string;
    })
  | (LogPosition & {
      kind: 'mint';
      pool: Address;
      /** Who called mint (and paid). */
      sender: Address;
      /** Whose position it is. */
      owner: Address;
      tickLower: number;
      tickUpper: number;
      liquidity: string;
      amount0: string;
      amount1: string;
    })
  | (LogPosition & { kind: 'answer'; feed: Address; answer: string; roundId: string; updatedAt: number })
  | (LogPosition & { kind: 'transfer'; token: Address; from: Address; to: Address; value: string })
  | (LogPosition & { kind: 'feedSet'; factory: Address; token: Address; feed: Address })
  | (LogPosition & { kind: 'rolesSet'; factory: Address; guardian: Address; feeCollector: Address });

export type DecodeFailure = { ok: false; reason: string; log: LogRef };

export type DecodeLogResult =
  | { ok: true; kind: 'record'; record: ChainRecord }
  | { ok: true; kind: 'watched'; event: WatchedEvent }
  | DecodeFailure;

export type DecodeVaultLogResult = { ok: true; record: ChainRecord } | DecodeFailure;
