import type { VaultRecord } from '../records/envelope.js';

/**
 * Where a vault's stream stands for the gap check: the last sequence number folded (null: none
 * yet, or only unsequenced schema-2 records) and whether the vault has a state at all.
 */
export interface SeqPosition {
  lastSeq: number | null;
  hasState: boolean;
}

/**
 * What to do with a record given the vault's position (see the envelope's `seq`):
 * - `apply`: fold it (`seq = last + 1`, an unsequenced record, or a revert whose `fromSeq − 1` is
 *   folded);
 * - `duplicate`: its number was folded already (republished after a crash); skip it;
 * - `gap`: numbers are missing before it: hold the vault, never fold past a lost record.
 * A vault whose history so far is unsequenced (schema 2) takes its first numbered record as the
 * baseline; a vault with no state must start at 1.
 */
export type SeqVerdict = 'apply' | 'duplicate' | 'gap';

export function checkSeq(at: SeqPosition, r: Pick<VaultRecord, 'seq' | 'type' | 'payload'>): SeqVerdict {
  const seq = r.seq;
  if (seq === undefined) return 'apply';
  const last = at.lastSeq;
  if (last === null) {
    if (at.hasState) return 'apply';
    // No state: the first record must be the first number (a revert of a vault never folded
    // voids nothing: it applies as a no-op).
    return seq === 1 || r.type === 'revert' ? 'apply' : 'gap';
  }
  if (seq <= last) return 'duplicate';
  if (r.type === 'revert') {
    const from = (r.payload as { fromSeq?: number }).fromSeq;
    return from === undefined || last >= from - 1 ? 'apply' : 'gap';
  }
  return seq === last + 1 ? 'apply' : 'gap';
}

/** The position after applying `r` (its number, or the old one for an unsequenced record). */
export function nextSeqPosition(at: SeqPosition, r: Pick<VaultRecord, 'seq'>): number | null {
  if (r.seq === undefined) return at.lastSeq;
  return at.lastSeq === null ? r.seq : Math.max(at.lastSeq, r.seq);
}

/**
 * Whether a revert voids a record: the record stands in one of the blocks the revert orphans (at
 * or above `fromBlock`, its block hash among `orphanedBlockHashes`). What a revert voids is gone
 * from the vault's history whatever state it leaves — the records folded (their rows are deleted
 * and the vault re-folded without them) and the records held behind a gap alike: a vault born in
 * the orphaned blocks is left with no state, and a held record of those blocks could never follow
 * (the canonical chain numbers a vault created again from 1), so it would hold the vault forever.
 */
export function voidedBy(revert: {
  fromBlock: number;
  orphanedBlockHashes: readonly string[];
}): (r: Pick<VaultRecord, 'blockNumber' | 'blockHash'>) => boolean {
  const hashes = new Set(revert.orphanedBlockHashes);
  return (r) => r.blockNumber >= revert.fromBlock && hashes.has(r.blockHash);
}
