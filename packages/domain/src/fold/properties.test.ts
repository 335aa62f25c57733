import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toSnapshotView } from '../mapping/snapshot.js';
import { snapshotView } from '../views/index.js';
import { performanceFeeDueUsd } from './fees.js';
import { buildHistory, stepsArb } from './history.arbitrary.js';
import { deserializeState, serializeState } from './serialize.js';
import { netUsd, strategyDeltaUsd, type VaultState } from './state.js';
import { hasCapital, positionInRange, statusOf } from './status.js';
import { computeValueUsd } from './valuation.js';

const runs = { numRuns: 80 };
const sameContext = (
  a: VaultState | undefined,
  b: { context: unknown },
  prev: { context: unknown } | undefined,
) => a !== undefined && prev !== undefined && JSON.stringify(b.context) === JSON.stringify(prev.context);
const abs = (x: bigint) => (x < 0n ? -x : x);

describe('fold properties over random valid histories', () => {
  it('accounting identities hold on every state, exactly inside and to the cent in the view', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        for (const { after: s } of buildHistory(steps)) {
          expect(s.valueUsd).toBe(computeValueUsd(s));
          expect(netUsd(s)).toBe(s.valueUsd + s.capitalOutUsd - s.capitalInUsd);
          expect(strategyDeltaUsd(s) + s.marketDeltaUsd).toBe(netUsd(s));
          for (const v of Object.values(s.idle)) expect(v > 0n).toBe(true);
          const view = snapshotView.parse(toSnapshotView(s));
          expect(
            Math.abs(view.netUsd - (view.valueUsd + view.capitalOutUsd - view.capitalInUsd)),
          ).toBeLessThan(0.01);
          expect(Math.round((view.strategyDeltaUsd + view.marketDeltaUsd) * 1e6)).toBe(
            Math.round(view.netUsd * 1e6),
          );
        }
      }),
      runs,
    );
  });

  it('a deposit or withdrawal at unchanged prices moves neither netUsd nor either delta', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        const ts = buildHistory(steps);
        for (let i = 1; i < ts.length; i++) {
          const { before, record, after } = ts[i]!;
          if (record.type !== 'deposit' && record.type !== 'withdrawal') continue;
          if (!sameContext(before, record, ts[i - 1]!.record)) continue;
          // per-term rounding is ≤ 0.5·10^-18 USD: a flow can move net by a few units of 10^-18
          expect(abs(netUsd(after) - netUsd(before!))).toBeLessThanOrEqual(4n);
          expect(after.marketDeltaUsd).toBe(before!.marketDeltaUsd);
          expect(abs(strategyDeltaUsd(after) - strategyDeltaUsd(before!))).toBeLessThanOrEqual(4n);
        }
      }),
      runs,
    );
  });

  it('a fee is due only above the previous peak, and charging it settles it', () => {
    fc.assert(
      fc.property(stepsArb, fc.integer({ min: 1, max: 10_000 }), (steps, rate) => {
        for (const { record, after: s } of buildHistory(steps)) {
          const due = performanceFeeDueUsd(s, rate);
          if (s.valueUsd <= s.highWaterUsd) expect(due).toBe(0n);
          else expect(due).toBeGreaterThanOrEqual(0n);
          expect(s.highWaterUsd >= 0n).toBe(true);
          if (record.type === 'fee.charged') expect(performanceFeeDueUsd(s, 10_000)).toBe(0n);
        }
      }),
      runs,
    );
  });

  it('status agrees with positions, capital and lifecycle', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        for (const { after: s } of buildHistory(steps)) {
          const status = statusOf(s);
          const deployed = Object.values(s.positions).filter((p) => p.liquidity > 0n);
          expect(status === 'suspended').toBe(s.suspension !== null);
          if (status === 'exiting') expect(s.exitRequested).toBe(true);
          if (status === 'idle') {
            expect(hasCapital(s)).toBe(false);
            expect(s.valueUsd).toBe(0n);
          }
          if (status === 'aiming') {
            expect(hasCapital(s)).toBe(true);
            expect(deployed).toHaveLength(0);
          }
          if (status === 'earning') {
            expect(deployed.length).toBeGreaterThan(0);
            for (const p of deployed) expect(positionInRange(s, p)).toBe(true);
          }
          if (status === 'attention') expect(deployed.some((p) => !positionInRange(s, p))).toBe(true);
        }
      }),
      runs,
    );
  });

  it('every state round-trips through its JSON form', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        const ts = buildHistory(steps);
        const last = ts[ts.length - 1]!.after;
        expect(deserializeState(JSON.parse(JSON.stringify(serializeState(last))))).toEqual(last);
      }),
      { numRuns: 60 },
    );
  });
});
