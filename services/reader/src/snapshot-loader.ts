import { type Pool, type SnapshotJson, snapshotsMatching } from '@vault-yield/store';
import type { VaultName } from './params.js';

export interface SnapshotLoader {
  /**
   * The snapshots a vault name names: by id, the vault's (none or one); by bare address, the
   * vault's on every chain with that address (none, one or several, by ascending chain).
   */
  load(name: VaultName): Promise<SnapshotJson[]>;
}

interface Waiter {
  resolve: (rows: SnapshotJson[]) => void;
  reject: (err: unknown) => void;
}

/** A batch key: the vault id, or the bare address. */
const keyOf = (name: VaultName) => ('id' in name ? name.id : name.address);

/**
 * Coalesces concurrent snapshot reads (by vault id, or by bare address) into one query (DataLoader-style,
 * nothing cached: every request still reads the current row). Requests arriving in the same
 * event-loop turn share a batch; at most `maxInFlight` batches run at once, and while they do,
 * new requests accumulate into the next batch, so under load round trips per request fall
 * instead of requests queueing for pool connections. Alone, a request waits one setImmediate.
 */
export function createSnapshotLoader(pool: Pool, maxInFlight = 4, maxBatch = 256): SnapshotLoader {
  let pending = new Map<string, Waiter[]>();
  let inFlight = 0;
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    while (inFlight < maxInFlight && pending.size > 0) {
      let batch: Map<string, Waiter[]>;
      if (pending.size <= maxBatch) {
        batch = pending;
        pending = new Map();
      } else {
        batch = new Map();
        for (const [k, v] of pending) {
          if (batch.size >= maxBatch) break;
          batch.set(k, v);
          pending.delete(k);
        }
      }
      inFlight++;
      const keys = [...batch.keys()];
      snapshotsMatching(
        pool,
        keys.filter((k) => k.startsWith('eip155:')),
        keys.filter((k) => !k.startsWith('eip155:')),
      )
        .then(
          (rows) => {
            const found = new Map<string, SnapshotJson[]>();
            const add = (k: string, r: SnapshotJson) => {
              const list = found.get(k);
              if (!list) found.set(k, [r]);
              else if (!list.some((x) => x.id === r.id)) list.push(r);
            };
            for (const r of rows) {
              if (batch.has(r.id)) add(r.id, r);
              if (batch.has(r.vault)) add(r.vault, r);
            }
            for (const list of found.values()) list.sort((a, b) => a.chainId - b.chainId);
            for (const [k, waiters] of batch) for (const w of waiters) w.resolve(found.get(k) ?? []);
          },
          (err: unknown) => {
            for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
          },
        )
        .finally(() => {
          inFlight--;
          if (pending.size > 0) schedule();
        });
    }
  };
  const schedule = () => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };

  return {
    load: (name) =>
      new Promise((resolve, reject) => {
        const key = keyOf(name);
        const waiters = pending.get(key);
        if (waiters) waiters.push({ resolve, reject });
        else pending.set(key, [{ resolve, reject }]);
        schedule();
      }),
  };
}
