import type { VaultRecord } from '@vault-yield/domain';
import type { StoredVaultSeq } from '@vault-yield/store';
import type { VaultMarkState } from '../vaults.js';

type Address = `0x${string}`;

/**
 * Numbers records (envelope `seq`, see packages/domain records/envelope.ts) from their vaults'
 * mark states, in publishing order, and returns the numbers per vault and block: written ahead
 * of the publish, so a reorg found after a crash still knows what the orphaned blocks used, and
 * whether a block's one record is a mark (`republish` recounts the rest from the chain).
 * The states are saved with the checkpoint: a restart from it numbers the same records alike.
 */
export function assignSeqs(
  records: readonly VaultRecord[],
  stateOf: (vault: Address) => VaultMarkState,
): StoredVaultSeq[] {
  const rows = new Map<string, StoredVaultSeq>();
  for (const r of records) {
    const state = stateOf(r.vault);
    const seq = state.nextSeq ?? 1;
    state.nextSeq = seq + 1;
    r.seq = seq;
    const key = `${r.vault}:${r.blockNumber}`;
    const row = rows.get(key);
    if (row) {
      row.lastSeq = seq;
      row.mark = false;
    } else
      rows.set(key, {
        vault: r.vault,
        blockNumber: r.blockNumber,
        blockHash: r.blockHash,
        firstSeq: seq,
        lastSeq: seq,
        // Compaction keeps a mark's block (it cannot be recounted from the chain).
        mark: r.type === 'mark',
      });
  }
  return [...rows.values()];
}

/**
 * A revert's numbers: `seq` above every number the vault may have published (its state's next
 * number, and the orphaned blocks' rows, which include write-ahead rows of batches published
 * before a crash), and `fromSeq`, the first number of the orphaned blocks (undefined when the
 * rows predate schema 3). Moves the state's next number past the revert.
 */
export function revertSeqs(
  state: VaultMarkState,
  orphaned: readonly StoredVaultSeq[],
): { seq: number; fromSeq: number | undefined } {
  let seq = state.nextSeq ?? 1;
  let fromSeq: number | undefined;
  for (const o of orphaned) {
    seq = Math.max(seq, o.lastSeq + 1);
    fromSeq = fromSeq === undefined ? o.firstSeq : Math.min(fromSeq, o.firstSeq);
  }
  state.nextSeq = seq + 1;
  return { seq, fromSeq };
}
