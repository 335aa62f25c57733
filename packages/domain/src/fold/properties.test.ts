import { buildHistory, stepsArb, USDC } from '@vault-yield/test-kit/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toSnapshotView } from '../mapping/snapshot.js';
import { snapshotView } from '../views/index.js';
import { PERFORMANCE_FEE_BPS, performanceFeeDueUsd } from './fees.js';
import { MIN_RETURN_BASE_USD } from './return-index.js';
import { deserializeState, serializeState } from './serialize.js';
import { netUsd, strategyDeltaUsd, type VaultState } from './state.js';
import { DUST_USD, hasCapital, positionInRange, statusOf } from './status.js';
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

  it('no record is refused, and a direct transfer is booked as a reconciliation of exactly its amount', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        // buildHistory folds every record with evolve, which throws on a refusal
        const ts = buildHistory(steps);
        expect(ts).toHaveLength(steps.length + 1);
        for (const { step, record, after } of ts) {
          if (step?.k !== 'transfer') continue;
          const c = record.context.holdings.balances;
          expect(c.length).toBeGreaterThan(0);
          const booked = after.reconciled.find((x) => x.token === step.token);
          expect(booked).toBeDefined();
          const sent = step.token === USDC ? (step.amount % 10n ** 12n) + 1n : step.amount;
          expect(booked!.amount).toBe(sent);
          expect(after.book).toEqual(after.idle);
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
          // the return index ignores flows (a few 10^-18 of rounding, relative)
          const ratio =
            before!.valueUsd >= MIN_RETURN_BASE_USD
              ? (after.returnIndex * 10n ** 12n) / before!.returnIndex
              : 10n ** 12n;
          expect(abs(ratio - 10n ** 12n)).toBeLessThanOrEqual(1n);
          expect(abs(strategyDeltaUsd(after) - strategyDeltaUsd(before!))).toBeLessThanOrEqual(4n);
        }
      }),
      runs,
    );
  });

  it('a fee is due only above the previous peak', () => {
    fc.assert(
      fc.property(stepsArb, fc.integer({ min: 1, max: 10_000 }), (steps, rate) => {
        for (const { after: s } of buildHistory(steps)) {
          const due = performanceFeeDueUsd(s, rate);
          if (s.valueUsd <= s.highWaterUsd) expect(due).toBe(0n);
          else expect(due).toBeGreaterThanOrEqual(0n);
          expect(s.highWaterUsd >= 0n).toBe(true);
        }
      }),
      runs,
    );
  });

  it('a charge settles exactly its share of the fee due (partial, whole or over-charge)', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        for (const { before, record, after } of buildHistory(steps)) {
          if (record.type !== 'fee.charged' || !before) continue;
          const charge = after.taxedUsd - before.taxedUsd;
          // prices unchanged: the value paid out (valuation rounds per term: a few 10^-18 USD)
          expect(abs(before.valueUsd - after.valueUsd - charge)).toBeLessThanOrEqual(4n);
          const dueBefore = performanceFeeDueUsd(before, PERFORMANCE_FEE_BPS);
          const dueAfter = performanceFeeDueUsd(after, PERFORMANCE_FEE_BPS);
          const expected = dueBefore > charge ? dueBefore - charge : 0n;
          // divRound in the mark and the due: a few units of 10^-18 USD
          expect(abs(dueAfter - expected)).toBeLessThanOrEqual(4n);
          expect(after.highWaterUsd >= before.highWaterUsd).toBe(true);
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
          if (status === 'exiting') expect(s.exitRequested || (s.exited && hasCapital(s))).toBe(true);
          if (status === 'idle') {
            expect(hasCapital(s)).toBe(false);
            expect(s.valueUsd < DUST_USD).toBe(true);
          }
          if (status === 'aiming') {
            expect(hasCapital(s)).toBe(true);
            expect(s.exited).toBe(false); // never aiming after an exit
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
