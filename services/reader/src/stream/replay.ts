/**
 * The replay budget: what every stream catching up behind the head may read together, in bytes of
 * JSON a second. A stream resumed from an old `Last-Event-ID` reads page after page as fast as its
 * socket takes them; a few such streams would read gigabytes a minute from Postgres and spend the
 * process's CPU on them, and every ordinary request and live stream would wait behind them. A
 * stream at the head is never gated: live followers never wait for replays.
 *
 * A virtual clock (GCRA) with reservations: a read behind the head first takes a turn, reserving
 * what it expects to read (its last read's size); the turn starts when the budget is free, and the
 * clock moves on by `bytes / rate`; once read, the turn is settled with what was read (the clock
 * corrected by the difference). Turns are served in the order they were taken (whoever asked first
 * reads first, a new stream included: no read behind the head is free while the budget is spent),
 * `burstBytes` may be read at once after a quiet while, and a turn given up (its stream left)
 * gives its reservation back.
 */

export interface ReplayBudgetOptions {
  /** Bytes a second every stream catching up may read together; 0: no budget (never waits). */
  bytesPerSecond: number;
  /** Bytes that may be read at once after a quiet while (default: one second's worth). */
  burstBytes?: number;
  /** The clock, ms (tests). */
  now?: () => number;
}

/** A turn to read behind the head: wait `wait` ms, read, then `settle` with the bytes read (0: given up). */
export interface ReplayTurn {
  readonly wait: number;
  settle(bytes: number): void;
}

export interface ReplayBudget {
  /** A turn for a read of about `estimate` bytes behind the head. */
  turn(estimate: number): ReplayTurn;
  stats(): {
    /** Bytes read behind the head since start (settled). */
    bytes: number;
    /** Waits handed out since start, ms (how far behind the replays are held). */
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
  /** When the budget is next free (ms, on `now`'s clock): reads reserved and settled move it on. */
  let free = Number.NEGATIVE_INFINITY;
  let bytes = 0;
  let waitedMs = 0;
  let waiting = 0;
  return {
    turn(estimate) {
      const e = Math.max(0, estimate);
      let settled = false;
      if (rate <= 0)
        return {
          wait: 0,
          settle(n) {
            if (settled) return;
            settled = true;
            bytes += n;
          },
        };
      const t = now();
      // A quiet budget saved up at most `burstMs` of reading.
      const at = Math.max(free, t - burstMs);
      free = at + e / rate;
      const wait = Math.max(0, at - t);
      waitedMs += wait;
      return {
        wait,
        settle(n) {
          if (settled) return;
          settled = true;
          bytes += n;
          free += (Math.max(0, n) - e) / rate;
        },
      };
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
