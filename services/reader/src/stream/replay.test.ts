import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createReplayBudget } from './replay.js';

/** A budget on a clock the test moves. */
const budgetAt = (bytesPerSecond: number, burstBytes?: number) => {
  let t = 0;
  const budget = createReplayBudget({ bytesPerSecond, burstBytes, now: () => t });
  return { budget, at: (ms: number) => (t = ms) };
};

describe('replay budget', () => {
  it('a quiet budget lets its burst through at once, then holds to the rate', () => {
    const { budget, at } = budgetAt(1_000, 2_000);
    at(10_000);
    const a = budget.turn(1_000);
    expect(a.wait).toBe(0);
    a.settle(1_000);
    const b = budget.turn(1_000);
    expect(b.wait).toBe(0);
    b.settle(1_500);
    // The burst is spent, and 500 more: the next read waits half a second.
    const c = budget.turn(1_000);
    expect(c.wait).toBeCloseTo(500);
    // A turn taken meanwhile waits behind it (first come, first served): behind its reservation.
    const d = budget.turn(1_000);
    expect(d.wait).toBeCloseTo(1_500);
    // c read less than it reserved: the clock gives the difference back to later turns.
    c.settle(200);
    expect(budget.turn(0).wait).toBeCloseTo(1_700);
    expect(budget.stats().bytes).toBe(2_700);
    expect(budget.stats().waitedMs).toBeCloseTo(500 + 1_500 + 1_700);
  });

  it('a new stream does not read for free while the budget is spent', () => {
    const { budget, at } = budgetAt(1_000, 1_000);
    at(0);
    budget.turn(0).settle(5_000); // a replay read 5 s worth at once
    expect(budget.turn(100).wait).toBeCloseTo(4_000);
  });

  it('a turn given up gives its reservation back, once', () => {
    const { budget, at } = budgetAt(1_000, 0);
    at(0);
    const a = budget.turn(2_000);
    a.settle(0);
    a.settle(5_000);
    expect(budget.turn(0).wait).toBe(0);
    expect(budget.stats().bytes).toBe(0);
  });

  it('0 bytes a second: never waits (unbounded), still counts', () => {
    const { budget } = budgetAt(0);
    const t = budget.turn(10 ** 9);
    expect(t.wait).toBe(0);
    t.settle(10 ** 9);
    expect(budget.stats().bytes).toBe(10 ** 9);
  });

  it('counts the streams waiting, each once', () => {
    const { budget } = budgetAt(1);
    const a = budget.waiting();
    const b = budget.waiting();
    expect(budget.stats().waiting).toBe(2);
    a();
    a();
    expect(budget.stats().waiting).toBe(1);
    b();
    expect(budget.stats().waiting).toBe(0);
  });

  it('whatever the reads: what is read between two turns never exceeds burst + rate × their distance, turns in the order taken', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 0, max: 4_000_000 }),
        fc.array(
          fc.record({
            gap: fc.integer({ min: 0, max: 5_000 }),
            estimate: fc.integer({ min: 0, max: 2_000_000 }),
            bytes: fc.integer({ min: 0, max: 2_000_000 }),
          }),
          { maxLength: 60 },
        ),
        (rate, burst, reads) => {
          const { budget, at } = budgetAt(rate, burst);
          let t = 0;
          /** Each read's bytes and when it started (after its turn's wait). */
          const started: { bytes: number; at: number }[] = [];
          for (const r of reads) {
            // One stream: each read is settled before the next turn is taken.
            t = Math.max(t + r.gap, started.at(-1)?.at ?? 0);
            at(t);
            const turn = budget.turn(r.estimate);
            expect(turn.wait).toBeGreaterThanOrEqual(0);
            started.push({ bytes: r.bytes, at: t + turn.wait });
            turn.settle(r.bytes);
          }
          for (let i = 1; i < started.length; i++)
            expect(started[i]!.at).toBeGreaterThanOrEqual(started[i - 1]!.at - 1e-6);
          // The reads from i up to (not with) j fit burst + rate × the time from i's start to j's.
          for (let i = 0; i < started.length; i++) {
            let sum = 0;
            for (let j = i + 1; j < started.length; j++) {
              sum += started[j - 1]!.bytes;
              const window = started[j]!.at - started[i]!.at;
              expect(sum).toBeLessThanOrEqual(burst + (rate / 1_000) * window + 1e-6 * sum + 1e-3);
            }
          }
        },
      ),
    );
  });
});
