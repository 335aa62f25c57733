import type { Micros, VaultState } from '@vault-yield/domain';
import type { LedgerPosition } from '@vault-yield/store';

/** A vault's fold state as committed to Postgres by this instance. */
export interface CachedVault {
  partition: number;
  state: VaultState;
  lastRecordId: string;
  head: LedgerPosition;
  /** Value and flows in micro-USD at the vault's last block end (what the next equity point is
   * compared with; null: no point yet). */
  micros: Micros | null;
  /** Last sequence number folded, and whether records are held behind a gap. */
  lastSeq: number | null;
  held: boolean;
}

/**
 * Fold states kept in memory between batches, so a batch of a partition this instance keeps
 * consuming neither reads nor re-parses its vaults' snapshot rows. Postgres stays the source of
 * truth: an entry is only written after its batch committed, and a partition's entries are only
 * trusted while the offset stored in Postgres (read under the partition's row lock) is the one
 * this instance committed last. Any other writer of the partition (another instance after a
 * rebalance, a lost commit, a rebuild) moves that offset, and the partition's entries are dropped.
 * Entries are keyed by vault id (`eip155:{chainId}:{address}`): the same address on two chains
 * is two vaults (and, keyed alike by the bare address, one partition).
 */
export interface StateCache {
  /** Call under the partition lock: drops the partition's entries unless `stored` is the offset we committed. */
  validate(partition: number, stored: string): void;
  get(partition: number, id: string): CachedVault | undefined;
  /** After a commit: the partition is at `nextOffset`; `vaults` (by vault id) replace (or, null, remove) entries. */
  commit(partition: number, nextOffset: string, vaults: ReadonlyMap<string, CachedVault | null>): void;
  /** After a failed or abandoned transaction whose outcome is unknown. */
  drop(partition: number): void;
  size(): number;
}

export function createStateCache(maxVaults: number): StateCache {
  const vaults = new Map<string, CachedVault>();
  const offsets = new Map<number, string>();
  const drop = (partition: number) => {
    offsets.delete(partition);
    for (const [vault, e] of vaults) if (e.partition === partition) vaults.delete(vault);
  };
  return {
    validate(partition, stored) {
      if (offsets.get(partition) !== stored) drop(partition);
    },
    get(partition, vault) {
      const e = vaults.get(vault);
      return e && e.partition === partition && offsets.has(partition) ? e : undefined;
    },
    commit(partition, nextOffset, changed) {
      if (maxVaults <= 0) return;
      offsets.set(partition, nextOffset);
      for (const [vault, e] of changed) {
        // Re-inserting keeps the map in least-recently-written order for eviction.
        vaults.delete(vault);
        if (e) vaults.set(vault, e);
      }
      // Evicted vaults are simply read from Postgres again.
      for (const vault of vaults.keys()) {
        if (vaults.size <= maxVaults) break;
        vaults.delete(vault);
      }
    },
    drop,
    size: () => vaults.size,
  };
}
