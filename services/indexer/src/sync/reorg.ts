import type { BlockHeader } from '@vault-yield/chain';
import { SCHEMA_VERSION, type ValuationContext, type VaultRecord } from '@vault-yield/domain';
import type { StoredBlock } from '@vault-yield/store';
import { ReorgTooDeepError } from '../errors.js';

type Address = `0x${string}`;
type Hash = `0x${string}`;

/** What a reorg found in the kept window undoes. */
export interface ReorgPlan {
  /** The highest kept block still canonical. */
  ancestor: StoredBlock;
  /** Kept blocks above it that the chain replaced, ascending. */
  orphaned: StoredBlock[];
  depth: number;
  /** Vault → hashes of the orphaned blocks it had records in (ascending). */
  touched: Map<Address, string[]>;
}

/**
 * Compares the kept blocks with the canonical headers: null when every kept block is still
 * canonical, else the common ancestor and what lies above it. Throws ReorgTooDeepError when no
 * kept block is canonical (the reorg is deeper than the window) — with what to do about it.
 */
export function planReorg(
  kept: Iterable<StoredBlock>,
  canonical: ReadonlyMap<number, BlockHeader>,
  reorgWindow: number,
): ReorgPlan | null {
  const stored = [...kept].sort((a, b) => b.blockNumber - a.blockNumber);
  const orphaned: StoredBlock[] = [];
  let ancestor: StoredBlock | undefined;
  for (const s of stored) {
    if (canonical.get(s.blockNumber)?.hash === s.blockHash) {
      ancestor = s;
      break;
    }
    orphaned.push(s);
  }
  if (orphaned.length === 0) return null;
  const lowest = stored[stored.length - 1]!;
  if (!ancestor || orphaned[orphaned.length - 1]!.blockNumber !== ancestor.blockNumber + 1) {
    throw new ReorgTooDeepError(
      `reorg deeper than the kept window: no kept block from ${lowest.blockNumber} to ${stored[0]!.blockNumber} ` +
        `is still canonical (REORG_WINDOW=${reorgWindow}). Published records of orphaned blocks cannot be ` +
        'reverted safely; rebuild the topic from a fresh checkpoint.',
    );
  }
  orphaned.reverse();
  const touched = new Map<Address, string[]>();
  for (const o of orphaned) {
    for (const v of o.vaults) {
      const list = touched.get(v as Address) ?? [];
      list.push(o.blockHash);
      touched.set(v as Address, list);
    }
  }
  return {
    ancestor,
    orphaned,
    depth: orphaned[orphaned.length - 1]!.blockNumber - ancestor.blockNumber,
    touched,
  };
}

/**
 * The revert record of a vault touched by orphaned blocks, at the common ancestor. Its tx hash is
 * the first orphaned block's hash: unique per orphaning and never a real tx hash, so its identity
 * never meets a mark's at the same block (marks use ZERO_HASH). Numbers: see sequence.ts
 * `revertSeqs` (the next number; `fromSeq`, the first number it voids).
 */
export function revertRecord(
  chainId: number,
  ancestor: StoredBlock,
  vault: Address,
  orphanedHashes: readonly string[],
  context: ValuationContext,
  seqs: { seq: number; fromSeq: number | undefined },
): VaultRecord {
  const payload = { fromBlock: ancestor.blockNumber + 1, orphanedBlockHashes: orphanedHashes as Hash[] };
  return {
    schemaVersion: SCHEMA_VERSION,
    seq: seqs.seq,
    chainId,
    blockNumber: ancestor.blockNumber,
    blockHash: ancestor.blockHash as Hash,
    blockTimestamp: ancestor.blockTimestamp,
    txHash: orphanedHashes[0] as Hash,
    txIndex: -1,
    logIndex: -1,
    vault,
    lastInBlock: true,
    context,
    type: 'revert',
    payload: seqs.fromSeq === undefined ? payload : { ...payload, fromSeq: seqs.fromSeq },
  };
}
