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
 *
 * A kept block the node returned no header for proves nothing alone: a node behind the head (one
 * of several behind one URL) has not got it yet, and a chain cut shorter (a rollback) has not got
 * it any more. Such blocks at the top count as orphaned only below a proven difference — a lower
 * block whose hash changed; with none, the answer is null (wait: the chain grows past them again,
 * with new hashes where it was reorganised).
 */
export function planReorg(
  kept: Iterable<StoredBlock>,
  canonical: ReadonlyMap<number, BlockHeader>,
  reorgWindow: number,
): ReorgPlan | null {
  const stored = [...kept].sort((a, b) => b.blockNumber - a.blockNumber);
  const orphaned: StoredBlock[] = [];
  let ancestor: StoredBlock | undefined;
  let proven = false;
  for (const s of stored) {
    const c = canonical.get(s.blockNumber);
    if (c?.hash === s.blockHash) {
      ancestor = s;
      break;
    }
    if (c) proven = true;
    orphaned.push(s);
  }
  if (orphaned.length === 0 || !proven) return null;
  const lowest = stored[stored.length - 1]!;
  if (!ancestor || orphaned[orphaned.length - 1]!.blockNumber !== ancestor.blockNumber + 1) {
    throw new ReorgTooDeepError(reorgTooDeepMessage(lowest.blockNumber, stored[0]!.blockNumber, reorgWindow));
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

/** What a reorg deeper than the kept window leaves, and what the operator does about it. */
export function reorgTooDeepMessage(lowest: number, highest: number, reorgWindow: number): string {
  return (
    `reorg deeper than the kept window: none of the kept blocks ${lowest}..${highest} is canonical any more ` +
    `(REORG_WINDOW=${reorgWindow}). The log holds records of orphaned blocks below the window, which cannot ` +
    'be reverted: the indexer publishes nothing more to this topic and halts again at every start. Recover by ' +
    'cutting a new log from the chain as it is now: `vault-yield reindex --topic <new topic>` (indexes from the ' +
    'start block into the new topic, rebuilds the projection from it and switches the reader), then move the ' +
    'indexer and projector to the new topic as it prints (README, "Reorgs"). Against the next one: ' +
    'REORG_WINDOW above the deepest reorg the chain can make, or CONFIRMATIONS at least that deep (the indexer ' +
    'then never publishes a block a reorg can still replace).'
  );
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
