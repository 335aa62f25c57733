import { type Pool, type SnapshotJson, snapshotsOf } from '@vault-yield/store';

export interface SnapshotLoader {
  load(vault: string): Promise<SnapshotJson | null>;
}

interface Waiter {
  resolve: (row: SnapshotJson | null) => void;
  reject: (err: unknown) => void;
}

/**
 * Coalesces concurrent snapshot reads into one `where vault = any($1)` query (DataLoader-style,
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
      snapshotsOf(pool, [...batch.keys()])
        .then(
          (rows) => {
            for (const [vault, waiters] of batch) for (const w of waiters) w.resolve(rows.get(vault) ?? null);
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
    load: (vault) =>
      new Promise((resolve, reject) => {
        const waiters = pending.get(vault);
        if (waiters) waiters.push({ resolve, reject });
        else pending.set(vault, [{ resolve, reject }]);
        schedule();
      }),
  };
}
