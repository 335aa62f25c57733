import type { StoredBlock } from '@vault-yield/store';
import { PriceWatch } from './price-watch.js';
import { RangePlanner } from './sync/ranges.js';
import type { Cursor } from './sync/types.js';
import { type VaultEntry, VaultRegistry } from './vaults.js';

type Address = `0x${string}`;

/**
 * What the indexer holds in memory between steps, all of it: every stage (sync/) reads and moves
 * this one object, handed to it by the engine (indexer.ts). A load from the checkpoint
 * (sync/checkpoint.ts) and a rewind (sync/rewind.ts) set it back; nothing else keeps a copy.
 */
export interface IndexerState {
  chainId: number;
  /** The checkpoint: the last block whose records Kafka acknowledged and Postgres committed. */
  cursor: Cursor;
  /** End of the last prepared chunk (ahead of `cursor` while its batch publishes). */
  tip: Cursor;
  /** The chain head last read. */
  head: number;
  readonly registry: VaultRegistry;
  /** Price moves that make vaults due for a mark (replaced on loads and rewinds). */
  watch: PriceWatch;
  /** The kept block window, mirror of indexer_blocks (write-ahead rows included). */
  readonly blocks: Map<number, StoredBlock>;
  /** Vaults written ahead (created above the checkpoint, maybe published): only for reverts. */
  readonly aheadVaults: Map<Address, VaultEntry>;
  /** The size of the next getLogs ranges, learnt from the last ones (sync/ranges.ts). */
  readonly ranges: RangePlanner;
  /** The block below which the sequence rows were last compacted (-1: not yet this run). */
  compactedBelow: number;
  /** Records and bytes of record values Kafka acknowledged, blocks valued (one read each). */
  readonly totals: { records: number; bytes: number; valuedBlocks: number };
  /** True once the run ended because the end block is checkpointed (and still canonical). */
  ended: boolean;
}

/** The state before anything is loaded: no checkpoint, no vaults. */
export function createIndexerState(range: {
  maxBlockRange: number;
  targetLogsPerChunk?: number;
}): IndexerState {
  return {
    chainId: 0,
    cursor: { number: -1, hash: null },
    tip: { number: -1, hash: null },
    head: 0,
    registry: new VaultRegistry(),
    watch: new PriceWatch(),
    blocks: new Map(),
    aheadVaults: new Map(),
    ranges: new RangePlanner(range.maxBlockRange, range.targetLogsPerChunk),
    compactedBelow: -1,
    totals: { records: 0, bytes: 0, valuedBlocks: 0 },
    ended: false,
  };
}
