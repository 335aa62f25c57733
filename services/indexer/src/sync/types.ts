import {
  type BlockHeader,
  type DecodeLogResult,
  eventTopics,
  type IndexerLog,
  type LogFilter,
} from '@vault-yield/chain';
import type { VaultRecord } from '@vault-yield/domain';
import type { StoredBlock, StoredIndexerVault, StoredVaultSeq } from '@vault-yield/store';
import type { PriceReading, ValuedSet } from '../price-watch.js';

type Address = `0x${string}`;

/** A block the indexer stands at (checkpoint, tip of prepared chunks). */
export interface Cursor {
  number: number;
  /** null only before the first block (start block 0). */
  hash: string | null;
}

/** Discovered while scanning a segment's factory logs, registered when its VaultCreated is processed. */
export interface PendingVault extends ValuedSet {
  vault: Address;
  createdBlock: number;
}

/** A span of blocks scanned with one set of filters (its factory logs read up front). */
export interface Segment {
  from: number;
  to: number;
  target: number;
  factoryLogs: IndexerLog[];
  pendingVaults: Map<Address, PendingVault>;
  snapshots: Map<number, PriceReading[]>;
  filters: LogFilter[];
}

/** One getLogs range with its headers, checked and decoded. */
export interface FetchedChunk {
  from: number;
  to: number;
  logs: IndexerLog[];
  decoded: Map<IndexerLog, DecodeLogResult>;
  headers: Map<number, BlockHeader>;
  /** The node refused the range (or a part of it) at least once: it came back split. */
  split: boolean;
}

/** One chunk's output, published and checkpointed in order. */
export interface Batch {
  records: VaultRecord[];
  kept: StoredBlock[];
  vaults: StoredIndexerVault[];
  born: StoredIndexerVault[];
  /** The sequence numbers of the records per vault and block (saved ahead of the publish). */
  seqs: StoredVaultSeq[];
  checkpoint: { number: number; hash: string };
  /** Stage durations (ms), for the debug log. */
  timing: { saveMs: number; publishMs: number };
}

/** Thrown when a prepared chunk does not chain to the tip: the loop then runs reorg handling. */
export class ReorgDetected extends Error {
  override name = 'ReorgDetected';
}

export const FACTORY_TOPICS = eventTopics.factory;
export const CHILD_TOPICS = [
  ...eventTopics.vault,
  eventTopics.swap,
  eventTopics.mint,
  eventTopics.answerUpdated,
];

export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
