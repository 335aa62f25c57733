/**
 * The replay budget: what every stream catching up behind the head may read together, in bytes of
 * JSON a second. A stream resumed from an old `Last-Event-ID` reads page after page as fast as its
 * socket takes them; a few such streams would read gigabytes a minute from Postgres and spend the
 * process's CPU on them, and every ordinary request and live stream would wait behind them. A
 * stream at the head (its page reached the newest commit) is never charged: live followers never
 * wait for replays.
 *
 * A virtual clock (GCRA): each charge moves the time the budget is next free by `bytes / rate`;
 * a charge made while it is ahead of now waits until then. Charges are served in the order they
 * were made (whoever asked first reads first), `burstBytes` may be spent at once after a quiet
 * while, and a stream that leaves while it waits gives nothing back (its read already happened).
 */

export interface ReplayBudgetOptions {
  /** Bytes a second every stream catching up may read together; 0: no budget (never waits). */
  bytesPerSecond: number;
  /** Bytes that may be read at once after a quiet while (default: one second's worth). */
  burstBytes?: number;
  /** The clock, ms (tests). */
  now?: () => number;
}

export interface ReplayBudget {
  /** Charges `bytes` read behind the head: how long (ms) the stream waits before its next read. */
  charge(bytes: number): number;
  stats(): {
    /** Bytes charged since start. */
    bytes: number;
    /** Waits handed out since start, ms (a measure of how far behind the replays are held). */
    waitedMs: number;
    /** Streams waiting for their turn now. */
    waiting: number;
  };
  /** Marks a stream waiting (stats) until the returned function is called. */
  waiting(): () => void;
}

export function createReplayBudget(o: ReplayBudgetOptions): ReplayBudget {
  const now = o.now ?? (() => performance.now());
  const rate = o.bytesPerSecond / 1_000; // bytes per ms
  const burstMs = rate > 0 ? (o.burstBytes ?? o.bytesPerSecond) / rate : 0;
  /** When the budget is next free (ms, on `now`'s clock). */
  let free = Number.NEGATIVE_INFINITY;
  let bytes = 0;
  let waitedMs = 0;
  let waiting = 0;
  return {
    charge(n) {
      bytes += n;
      if (rate <= 0 || n <= 0) return 0;
      const t = now();
      // A quiet budget saved up at most `burstMs` of reading.
      free = Math.max(free, t - burstMs) + n / rate;
      const wait = Math.max(0, free - t);
      waitedMs += wait;
      return wait;
    },
    stats: () => ({ bytes, waitedMs, waiting }),
    waiting() {
      waiting += 1;
      let done = false;
      return () => {
        if (done) return;
        done = true;
        waiting -= 1;
      };
    },
  };
}
