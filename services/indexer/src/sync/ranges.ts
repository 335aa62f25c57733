import type { FetchedChunk } from './types.js';

/**
 * Sizes getLogs ranges by what came back: a range aims for `targetLogs` logs at the density of
 * the last chunk, grows at most twofold per chunk, shrinks when the node refuses one. A range
 * larger than any that came back whole (`provenSize`) is a growth probe and goes out alone, so a
 * density jump costs one refused range, not `concurrency` of them.
 */
export class RangePlanner {
  chunkSize: number;
  provenSize = 0;
  /** Logs per block of the last fetched chunk. */
  density = 0;

  constructor(
    private readonly maxBlockRange: number,
    /** Logs one range aims for: ≈ 5 MB of JSON at ≈ 650 bytes a log, a third of the logs client's cap. */
    readonly targetLogs = 8000,
  ) {
    this.chunkSize = Math.min(maxBlockRange, 10);
  }

  /** After a chunk came back: learn its density, grow (at most ×2) toward the target. */
  adapt(chunk: Pick<FetchedChunk, 'from' | 'to' | 'logs' | 'split'>): void {
    const blocks = chunk.to - chunk.from + 1;
    if (!chunk.split) this.provenSize = Math.max(this.provenSize, blocks);
    this.density = chunk.logs.length / blocks;
    const wanted = this.density > 0 ? Math.floor(this.targetLogs / this.density) : this.maxBlockRange;
    this.chunkSize = Math.max(1, Math.min(this.maxBlockRange, wanted, this.chunkSize * 2));
  }

  /** The node refused [from, to]: never ask that much again until a range comes back whole. */
  refused(from: number, to: number): void {
    this.chunkSize = Math.max(1, Math.min(this.chunkSize, Math.floor((to - from + 1) / 2)));
    this.provenSize = Math.min(this.provenSize, to - from);
  }

  /**
   * Whether another range of `chunkSize` may go out with `inFlight` ranges already out. Ranges are
   * consumed in order, and a node serves concurrent requests side by side: where blocks are dense,
   * more than about two chunks' worth of logs in flight only delays the one needed next.
   */
  mayDispatch(inFlight: readonly { from: number; to: number }[], concurrency: number): boolean {
    if (inFlight.length === 0) return true;
    if (inFlight.length >= concurrency) return false;
    if (this.chunkSize > this.provenSize) return false;
    const expected = (blocks: number) => blocks * this.density;
    const ahead = inFlight.reduce((n, c) => n + expected(c.to - c.from + 1), 0);
    return ahead + expected(this.chunkSize) <= 2 * this.targetLogs;
  }
}

/** A segment's getLogs ranges, fetched ahead of their turn and taken in block order. */
export interface ChunkQueue {
  /** Ranges out (fetching or fetched, not yet taken). */
  readonly size: number;
  /** Sends out as many of the next ranges as the planner allows now. */
  dispatch(): void;
  /** The lowest range out (its fetch settles in its own time). */
  take(): Promise<FetchedChunk> | undefined;
  /** A taken chunk came back: the planner learns from it and the next ranges go out. */
  adapt(chunk: FetchedChunk): void;
  /** Settles once every range still out has settled. */
  settled(): Promise<unknown>;
}

/** The ranges of [from, to], each `fetch`ed in the planner's sizes, `concurrency` at most at once. */
export function createChunkQueue(o: {
  planner: RangePlanner;
  concurrency: number;
  from: number;
  to: number;
  fetch: (from: number, to: number) => Promise<FetchedChunk>;
}): ChunkQueue {
  const { planner } = o;
  const inFlight: { from: number; to: number; p: Promise<FetchedChunk> }[] = [];
  let next = o.from;
  const dispatch = () => {
    while (next <= o.to && planner.mayDispatch(inFlight, o.concurrency)) {
      const f = next;
      const t = Math.min(o.to, f + planner.chunkSize - 1);
      next = t + 1;
      const p = o.fetch(f, t);
      p.catch(() => {}); // observed when its turn comes
      inFlight.push({ from: f, to: t, p });
    }
  };
  return {
    get size() {
      return inFlight.length;
    },
    dispatch,
    take: () => inFlight.shift()?.p,
    adapt(chunk) {
      planner.adapt(chunk);
      dispatch();
    },
    settled: () => Promise.allSettled(inFlight.map((c) => c.p)),
  };
}
