import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  copyMarkState,
  emptyMarkState,
  flipped,
  markPublished,
  rangeFlags,
  shouldMark,
  type VaultMarkState,
} from './vaults.js';

const cadence = { intervalBlocks: 10, minIntervalMs: 60_000 };

function stateWith(lo: number, hi: number, tick: number, lastBlock: number, lastTs: number): VaultMarkState {
  const s = emptyMarkState();
  s.positions['1'] = [lo, hi];
  markPublished(s, lastBlock, lastTs, tick);
  return s;
}

describe('mark rules', () => {
  it('uses the pool rule for range flags: lower ≤ tick < upper', () => {
    expect(rangeFlags({ a: [-10, 10] }, -10)).toEqual({ a: true });
    expect(rangeFlags({ a: [-10, 10] }, 10)).toEqual({ a: false });
    expect(rangeFlags({ a: [-10, 10] }, undefined)).toEqual({ a: false });
  });

  it('always marks when a position’s in-range flag flips, whatever the cadence', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 9 }), (last, gap) => {
        const s = stateWith(0, 100, 50, last, 1000);
        expect(flipped(s, 150)).toBe(true);
        expect(shouldMark(s, last + gap, 1000 + gap, 150, cadence)).toBe(true);
      }),
    );
  });

  it('never marks a vault whose prices did not move and whose flags hold', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 10_000 }), (last, gap) => {
        const s = stateWith(0, 100, 50, last, 0);
        expect(shouldMark(s, last + gap, gap * 12, 60, cadence)).toBe(false);
      }),
    );
  });

  it('marks moved prices at most once per N blocks and M ms of block time', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 200_000 }),
        (last, gap, ms) => {
          const s = stateWith(0, 100, 50, last, 1_000);
          s.dirty = true;
          const ts = 1_000 + Math.floor(ms / 1000);
          const allowed = gap >= cadence.intervalBlocks && (ts - 1_000) * 1000 >= cadence.minIntervalMs;
          expect(shouldMark(s, last + gap, ts, 60, cadence)).toBe(allowed);
        },
      ),
    );
  });

  it('marks a dirty vault that never had a record valued (after a reorg reset)', () => {
    const s = emptyMarkState();
    s.dirty = true;
    expect(shouldMark(s, 5, 5, 0, cadence)).toBe(true);
  });

  it('copies a mark state deeply: equal to structuredClone, and independent of the original', () => {
    const ticks = fc.integer({ min: -887272, max: 887272 });
    const state = fc.record({
      positions: fc.dictionary(fc.nat({ max: 50 }).map(String), fc.tuple(ticks, ticks)),
      flags: fc.dictionary(fc.nat({ max: 50 }).map(String), fc.boolean()),
      lastBlock: fc.option(fc.nat()),
      lastTs: fc.option(fc.nat()),
      dirty: fc.boolean(),
      nextSeq: fc.integer({ min: 1, max: 2 ** 40 }),
    });
    fc.assert(
      fc.property(state, (s: VaultMarkState) => {
        const copy = copyMarkState(s);
        expect(JSON.stringify(copy)).toBe(JSON.stringify(structuredClone(s)));
        const before = JSON.stringify(copy);
        for (const p of Object.values(s.positions)) p[0] -= 1;
        s.flags['x'] = true;
        s.dirty = !s.dirty;
        expect(JSON.stringify(copy)).toBe(before);
      }),
    );
  });
});
