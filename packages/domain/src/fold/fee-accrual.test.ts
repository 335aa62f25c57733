/**
 * Returns are net of the performance fee as it is earned (issue #43 item 3): the return index
 * chains over the value net of the fee accrued and not yet charged, so a gain's fee is a return of
 * the days (and the strategy) that earned it, and a charge of the accrual moves nothing.
 */

import { eth, History, OTHER, oneBlock, USDC, usdc, WETH } from '@vault-yield/test-kit/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SCALE, usdToRaw } from '../math/fixed.js';
import type { VaultRecord } from '../records/envelope.js';
import type { EquitySample } from '../stats/daily.js';
import { strategiesStats } from '../stats/stats.js';
import { foldRecord } from './evolve.js';
import { performanceFeeDueUsd, settleHighWater } from './fees.js';
import { accruedFeeUsd, blockReturnIndex, netValueUsd } from './return-index.js';
import type { VaultState } from './state.js';

const DAY_S = 86_400;
const foldAll = (s: VaultState | undefined, rs: readonly VaultRecord[]): VaultState =>
  rs.reduce<VaultState | undefined>((acc, r) => foldRecord(acc, r), s)!;
const rated = (h: History, bps: number): VaultRecord => {
  const c = h.created();
  return { ...c, payload: { ...c.payload, performanceFeeBps: bps } };
};
const charge = (h: History, raw: bigint, m: { weth?: string } = {}) =>
  h.record('fee.charged', { token: USDC, amount: raw.toString(), recipient: OTHER }, m);
const sample = (s: VaultState): EquitySample => ({
  ts: s.updatedAt,
  valueUsd: Number(s.valueUsd) / 1e18,
  capitalInUsd: Number(s.capitalInUsd) / 1e18,
  capitalOutUsd: Number(s.capitalOutUsd) / 1e18,
  strategy: s.strategy,
  returnIndex: Number(s.returnIndex) / 1e18,
});
const abs = (x: bigint) => (x < 0n ? -x : x);

describe('the fee is a return of whatever earned the gain, not of the day it is charged', () => {
  /**
   * The case: strategy A gains 20 % in 30 days (1 WETH 2,000→2,480 beside 400 USDC: 2,400
   * → 2,880), the vault switches to B (flat), the fee (20 % of 480: 96 USDC) is charged 5 days later.
   */
  function switchedThenCharged(chargeBeforeSwitch: boolean) {
    const h = new History();
    let s = foldAll(undefined, [rated(h, 2000), h.deposit(WETH, eth(1)), h.deposit(USDC, usdc(400))]);
    const points: VaultState[] = [s];
    const step = (r: VaultRecord) => {
      s = foldRecord(s, r);
      points.push(s);
    };
    for (let d = 1; d <= 30; d++) {
      h.ts += DAY_S;
      step(h.mark({ weth: String(2000 + 16 * d) }));
    }
    if (chargeBeforeSwitch) step(charge(h, usdc(96)));
    step(h.record('strategy.selected', { strategy: 'flat-b' }));
    const beforeCharge = s.returnIndex;
    for (let d = 1; d <= 5; d++) {
      h.ts += DAY_S;
      step(h.mark());
    }
    if (!chargeBeforeSwitch) step(charge(h, usdc(96)));
    h.ts += 2 * DAY_S;
    step(h.mark());
    return { s, beforeCharge, points };
  }

  it('charged 5 days after the switch: B earns 0 (was a loss of the fee), A its gain net of the fee', () => {
    const { s, beforeCharge, points } = switchedThenCharged(false);
    // 2,880 − 20 % of 480 = 2,784 net of the accrual: 1.16 from 2,400 (30 steps of rounding).
    expect(abs(beforeCharge - (SCALE * 116n) / 100n)).toBeLessThanOrEqual(30n);
    expect(s.returnIndex).toBe(beforeCharge); // the charge equals the accrual: nothing moves
    const stats = strategiesStats([points.map(sample)], { minDailyReturns: 2, asOf: s.updatedAt });
    expect(stats.get('flat-b')).toMatchObject({ liveApr: 0, sigma: 0 });
    const a = stats.get('wide-eth')!;
    expect(a.days).toBe(30);
    expect(a.liveApr! * (a.days / 365)).toBeCloseTo(0.16, 12);
  });

  it('charged before the switch: the very same figures (the charge moves nothing either way)', () => {
    const late = switchedThenCharged(false);
    const early = switchedThenCharged(true);
    expect(early.s.returnIndex).toBe(late.s.returnIndex);
    const opts = { minDailyReturns: 2, asOf: late.s.updatedAt };
    expect(strategiesStats([early.points.map(sample)], opts)).toEqual(
      strategiesStats([late.points.map(sample)], opts),
    );
  });
});

describe('fee accrual properties', () => {
  const usdAmount = fc.bigInt({ min: 10n ** 18n, max: 10n ** 27n });

  it('blockReturnIndex: a charge of exactly the fee accrued leaves the index (within 1 unit of 10^-18)', () => {
    fc.assert(
      fc.property(usdAmount, usdAmount, fc.integer({ min: 0, max: 10_000 }), (v, hw, rate) => {
        const fee = accruedFeeUsd(v, hw, rate);
        const after = settleHighWater(hw, v, fee, rate);
        const i = blockReturnIndex(
          SCALE,
          { valueUsd: v, highWaterUsd: hw, rateBps: rate },
          { valueUsd: v - fee, highWaterUsd: after, rateBps: rate },
          [{ kind: 'fee', valueUsd: fee, rateBps: rate }],
        );
        expect(abs(i - SCALE)).toBeLessThanOrEqual(1n);
        expect(netValueUsd(v - fee, after, rate) - netValueUsd(v, hw, rate)).toBeLessThanOrEqual(1n);
      }),
      { numRuns: 500 },
    );
  });

  it('the day a fee is charged, the fold leaves the index where it stood when the charge is the accrual', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1000, max: 4000 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 5000 }),
        (prices, rate) => {
          const h = new History();
          let s = foldAll(undefined, [rated(h, rate), h.deposit(WETH, eth(1)), h.deposit(USDC, usdc(5000))]);
          for (const p of prices) s = foldRecord(s, h.mark({ weth: String(p) }));
          const due = usdToRaw(performanceFeeDueUsd(s, rate), 6, SCALE); // whole micro-USDC, floor
          if (due === 0n) return;
          const t = foldRecord(s, charge(h, due));
          // The charge is the accrual less under 1 micro-USDC: the index moves by under 10^-6 / N.
          const moved = abs(t.returnIndex - s.returnIndex) * netValueUsd(s.valueUsd, s.highWaterUsd, rate);
          expect(moved).toBeLessThanOrEqual(s.returnIndex * 10n ** 12n);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('flows, charges and a rate change in one block or in blocks of their own: the same index', () => {
    const op = fc.oneof(
      fc.record({ k: fc.constant('in' as const), n: fc.integer({ min: 1, max: 3000 }) }),
      fc.record({ k: fc.constant('out' as const), n: fc.integer({ min: 1, max: 3000 }) }),
      fc.record({ k: fc.constant('fee' as const), n: fc.integer({ min: 1, max: 300 }) }),
      fc.record({ k: fc.constant('rate' as const), n: fc.integer({ min: 0, max: 5000 }) }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1000, max: 4000 }),
        fc.array(op, { minLength: 1, maxLength: 6 }),
        (p, ops) => {
          const run = (shared: boolean) => {
            const h = new History();
            let s = foldAll(undefined, [
              rated(h, 2000),
              h.deposit(WETH, eth(1)),
              h.deposit(USDC, usdc(5000)),
            ]);
            let held = usdc(5000);
            const m = { weth: String(p) };
            const rs: VaultRecord[] = [];
            for (const o of ops) {
              if (o.k === 'rate') rs.push(h.record('fee.rate.set', { performanceFeeBps: o.n }, m));
              else if (o.k === 'in') {
                held += usdc(o.n);
                rs.push(h.deposit(USDC, usdc(o.n), m));
              } else {
                const raw = usdc(o.n) % held;
                if (raw === 0n) continue;
                held -= raw;
                rs.push(o.k === 'out' ? h.withdrawal(USDC, raw, m) : charge(h, raw, m));
              }
            }
            if (rs.length === 0) return s;
            s = foldAll(s, shared ? oneBlock(rs) : rs);
            return s;
          };
          const a = run(true);
          const b = run(false);
          expect(abs(a.returnIndex - b.returnIndex)).toBeLessThanOrEqual(BigInt(ops.length) * 4n);
          expect(a.highWaterUsd).toBe(b.highWaterUsd);
        },
      ),
      { numRuns: 300 },
    );
  });
});
