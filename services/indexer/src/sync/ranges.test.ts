import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createChunkQueue, RangePlanner } from './ranges.js';
import type { FetchedChunk } from './types.js';

/** A chunk of `to - from + 1` blocks holding `density` logs a block (the planner reads the count). */
const chunkOf = (from: number, to: number, density: number, split = false): FetchedChunk => ({
  from,
  to,
  logs: new Array(Math.round((to - from + 1) * density)),
  decoded: new Map(),
  headers: new Map(),
  split,
});

describe('chunk queue: a segment’s ranges fetched ahead, taken in order', () => {
  it('covers the segment once, in block order, never more than `concurrency` ranges out', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 1_000 }),
        fc.integer({ min: 0, max: 2_000 }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.double({ min: 0, max: 50, noNaN: true }), { minLength: 1, maxLength: 20 }),
        async (from, length, maxBlockRange, concurrency, densities) => {
          const planner = new RangePlanner(maxBlockRange, 100);
          const fetched: [number, number][] = [];
          let out = 0;
          let most = 0;
          let k = 0;
          const queue = createChunkQueue({
            planner,
            concurrency,
            from,
            to: from + length,
            fetch: async (f, t) => {
              fetched.push([f, t]);
              most = Math.max(most, ++out);
              return chunkOf(f, t, densities[k++ % densities.length]!);
            },
          });
          const taken: [number, number][] = [];
          queue.dispatch();
          while (queue.size > 0) {
            const chunk = await queue.take()!;
            out--;
            taken.push([chunk.from, chunk.to]);
            queue.adapt(chunk);
          }
          await queue.settled();
          expect(taken).toEqual(fetched);
          expect(taken[0]![0]).toBe(from);
          expect(taken.at(-1)![1]).toBe(from + length);
          for (let i = 1; i < taken.length; i++) expect(taken[i]![0]).toBe(taken[i - 1]![1] + 1);
          expect(most).toBeLessThanOrEqual(concurrency);
        },
      ),
    );
  });

  it('sends a range larger than any that came back whole out alone (a growth probe)', async () => {
    const planner = new RangePlanner(1_000, 8_000);
    const starts: number[] = [];
    const queue = createChunkQueue({
      planner,
      concurrency: 4,
      from: 0,
      to: 999,
      fetch: async (f, t) => {
        starts.push(f);
        return chunkOf(f, t, 0);
      },
    });
    queue.dispatch();
    // Nothing proven yet: the first range (10 blocks) goes out alone.
    expect(starts).toEqual([0]);
    const first = await queue.take()!;
    queue.adapt(first);
    // Ten blocks came back whole; the next (twice as large) is a probe: alone again.
    expect(planner.chunkSize).toBe(20);
    expect(starts).toEqual([0, 10]);
    expect(queue.size).toBe(1);
  });
});
