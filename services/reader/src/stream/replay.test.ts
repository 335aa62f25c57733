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
    expect(budget.charge(1_000)).toBe(0);
    expect(budget.charge(1_000)).toBe(0);
    // The burst is spent: 500 bytes more wait half a second.
    expect(budget.charge(500)).toBeCloseTo(500);
    // A later charge waits behind the earlier ones (first come, first served).
    expect(budget.charge(1_000)).toBeCloseTo(1_500);
    expect(budget.stats().bytes).toBe(3_500);
    expect(budget.stats().waitedMs).toBeCloseTo(2_000);
  });

  it('0 bytes a second: never waits (unbounded), still counts', () => {
    const { budget } = budgetAt(0);
    expect(budget.charge(10 ** 9)).toBe(0);
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

  it('whatever the charges: what is read between two turns never exceeds burst + rate × their distance, turns in the order charged', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1, max: 4_000_000 }),
        fc.array(
          fc.record({
            gap: fc.integer({ min: 0, max: 5_000 }),
            bytes: fc.integer({ min: 0, max: 2_000_000 }),
          }),
          {
            maxLength: 60,
          },
        ),
        (rate, burst, charges) => {
          const { budget, at } = budgetAt(rate, burst);
          let t = 0;
          /** Each charge's bytes and when it is served (its read may go on). */
          const served: { bytes: number; at: number }[] = [];
          for (const c of charges) {
            t += c.gap;
            at(t);
            const wait = budget.charge(c.bytes);
            expect(wait).toBeGreaterThanOrEqual(0);
            served.push({ bytes: c.bytes, at: t + wait });
          }
          // First come, first served (with a charge of 0 bytes served at once).
          const paid = served.filter((s) => s.bytes > 0);
          for (let i = 1; i < paid.length; i++)
            expect(paid[i]!.at).toBeGreaterThanOrEqual(paid[i - 1]!.at - 1e-6);
          // A charge is paid after its read: the stream's next read waits until it is served. So
          // the bytes charged after one is served, up to and with another, fit burst + rate × the
          // time between them.
          for (let i = 0; i < paid.length; i++) {
            let sum = 0;
            for (let j = i + 1; j < paid.length; j++) {
              sum += paid[j]!.bytes;
              const window = paid[j]!.at - paid[i]!.at;
              expect(sum).toBeLessThanOrEqual(burst + (rate / 1_000) * window + 1e-6 * sum + 1e-3);
            }
          }
        },
      ),
    );
  });
});
