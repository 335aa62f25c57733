/**
 * A strategy's LP figures over its member vaults (issue #46 item 8): the sums of the vaults'
 * `byStrategy` entries against an independent exact computation, null while liveApr is null and
 * where a denominator is empty; the drawdown of the chained daily returns against its definition
 * by brute force; the entries read back from a stored state's JSON; and over random folded
 * histories with strategy switches, the entries of all strategies adding up to the vault's own.
 */

import {
  buildHistory,
  eth,
  History,
  oneBlock,
  stepsArb,
  USDC,
  usdc,
  WETH,
} from '@vault-yield/test-kit/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldRecord } from '../fold/evolve.js';
import { figuresByStrategy } from '../fold/lp.js';
import { deserializeState, serializeState } from '../fold/serialize.js';
import type { StrategyLp, VaultState } from '../fold/state.js';
import { MIN_APR_HISTORY_MS, YEAR_MS } from '../mapping/lp.js';
import type { VaultRecord } from '../records/envelope.js';
import { maxDrawdown } from './drawdown.js';
import { NO_STRATEGY_LP, parseStrategyLp, strategyLpFigures, sumStrategyLp, WEEK_MS } from './lp.js';
import { realisedStats } from './stats.js';

const DAY = 86_400_000;
const usd = (n: number) => BigInt(Math.round(n * 1e6)) * 10n ** 12n;
const entry = (e: Partial<StrategyLp> = {}): StrategyLp => ({
  feesUsd: 0n,
  rewardsUsd: 0n,
  capitalMs: 0n,
  fundedMs: 0,
  openMs: 0,
  inRangeMs: 0,
  rebalances: 0,
  divergenceUsd: 0n,
  ...e,
});
/** 30 daily returns: enough history under the default minimum. */
const month = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? -0.002 : 0.001));

describe('maxDrawdown of the chained daily returns', () => {
  it('the largest fall from a peak, the first day’s start a peak', () => {
    expect(maxDrawdown([])).toBe(0);
    expect(maxDrawdown([0.01, 0.02, 0])).toBe(0);
    expect(maxDrawdown([-0.1])).toBeCloseTo(0.1, 15);
    // 1 → 1.1 → 0.88 → 0.924 → 0.462 → 0.9702: the fall from 1.1 to 0.462 is 58 %
    expect(maxDrawdown([0.1, -0.2, 0.05, -0.5, 1.1])).toBeCloseTo(1 - 0.462 / 1.1, 12);
    expect(maxDrawdown([0.5, -1, 0.3])).toBe(1);
    expect(maxDrawdown([{ day: '2026-01-01', r: -0.25, weightUsd: 1 }])).toBe(0.25);
  });

  it('equals max over i ≤ j of (I_i − I_j) / I_i, and lies in [0, 1] (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -0.99, max: 2, noNaN: true }), { maxLength: 80 }), (rs) => {
        const index = [1];
        for (const r of rs) index.push(index.at(-1)! * (1 + r));
        let brute = 0;
        for (let i = 0; i < index.length; i++)
          for (let j = i; j < index.length; j++) brute = Math.max(brute, (index[i]! - index[j]!) / index[i]!);
        const dd = maxDrawdown(rs);
        expect(dd).toBeCloseTo(brute, 12);
        expect(dd).toBeGreaterThanOrEqual(0);
        expect(dd).toBeLessThanOrEqual(1);
        if (rs.every((r) => r >= 0)) expect(dd).toBe(0);
      }),
    );
  });
});

describe('strategyLpFigures', () => {
  it('a hand-made month: 10 USD of fees over 1,000 USD held a day is 365 % a year', () => {
    const vault = entry({
      feesUsd: usd(10),
      rewardsUsd: usd(2.5),
      capitalMs: usd(1000) * BigInt(DAY), // 1,000 USD for a day (USD · 10^18 · ms)
      fundedMs: 14 * DAY,
      openMs: 4 * DAY,
      inRangeMs: 3 * DAY,
      rebalances: 3,
      divergenceUsd: -usd(4),
    });
    expect(strategyLpFigures([vault], month)).toEqual({
      feeApr: 3.65, // 10 / 1,000 a day × 365
      rewardApr: 0.9125,
      timeInRange: 0.75,
      rebalancesPerWeek: 1.5, // 3 over 14 days
      divergenceApr: -1.46,
      maxDrawdown: Math.round(maxDrawdown(month) * 1e6) / 1e6,
    });
    // Two vaults: sums over sums, not a mean of the vaults' figures.
    const other = entry({ feesUsd: usd(30), capitalMs: usd(3000) * BigInt(DAY), fundedMs: DAY, openMs: 0 });
    const both = strategyLpFigures([vault, other], month);
    expect(both.feeApr).toBe(((10 + 30) / 4000) * 365);
    expect(both.timeInRange).toBe(0.75);
    expect(both.rebalancesPerWeek).toBe(1.4); // 3 over 15 days
  });

  it('all null while liveApr is null (fewer daily returns than the minimum), numbers from it on', () => {
    const vault = entry({ feesUsd: usd(1), capitalMs: usd(100) * BigInt(DAY), fundedMs: DAY, openMs: 1 });
    expect(strategyLpFigures([vault], month.slice(0, 29))).toEqual(NO_STRATEGY_LP);
    expect(realisedStats(month.slice(0, 29)).liveApr).toBeNull();
    expect(strategyLpFigures([vault], month).feeApr).toBe(3.65);
    expect(strategyLpFigures([vault], month.slice(0, 5), { minDailyReturns: 5 }).feeApr).toBe(3.65);
    expect(strategyLpFigures([vault], month.slice(0, 4), { minDailyReturns: 5 })).toEqual(NO_STRATEGY_LP);
    expect(strategyLpFigures([vault], [])).toEqual(NO_STRATEGY_LP);
  });

  it('null where a denominator is empty; the rates wait for a day of funded time', () => {
    // No member with LP figures (folded before fold version 5): only the drawdown, from the returns.
    expect(strategyLpFigures([], month)).toEqual({
      ...NO_STRATEGY_LP,
      maxDrawdown: Math.round(maxDrawdown(month) * 1e6) / 1e6,
    });
    const short = entry({
      feesUsd: usd(1),
      capitalMs: usd(100),
      fundedMs: MIN_APR_HISTORY_MS - 1,
      rebalances: 2,
    });
    expect(strategyLpFigures([short], month)).toMatchObject({ feeApr: null, rebalancesPerWeek: null });
    const unvalued = entry({ fundedMs: DAY, rebalances: 2, openMs: 5, inRangeMs: 0 });
    expect(strategyLpFigures([unvalued], month)).toMatchObject({
      feeApr: null,
      rewardApr: null,
      divergenceApr: null,
      rebalancesPerWeek: 14,
      timeInRange: 0,
    });
  });

  const entryArb = fc.record({
    feesUsd: fc.bigInt({ min: -(10n ** 20n), max: 10n ** 24n }),
    rewardsUsd: fc.bigInt({ min: 0n, max: 10n ** 24n }),
    // ∫V dt from 1,000 USD over 11.6 days up: the APRs stay within a float's exact integers of micros
    capitalMs: fc.oneof(fc.constant(0n), fc.bigInt({ min: 10n ** 30n, max: 10n ** 36n })),
    fundedMs: fc.integer({ min: 0, max: 400 * DAY }),
    openMs: fc.integer({ min: 0, max: 400 * DAY }),
    inRangeMs: fc.integer({ min: 0, max: 400 * DAY }),
    rebalances: fc.integer({ min: 0, max: 10_000 }),
    divergenceUsd: fc.bigInt({ min: -(10n ** 24n), max: 10n ** 22n }),
  });
  const vaultsArb = fc
    .array(entryArb, { maxLength: 6 })
    .map((es) => es.map((e) => ({ ...e, inRangeMs: Math.min(e.inRangeMs, e.openMs) })));

  /** |figure − num/den| ≤ half a micro, exactly (den > 0). */
  const within = (figure: number | null, num: bigint, den: bigint) => {
    expect(figure).not.toBeNull();
    const micros = BigInt(Math.round(figure! * 1e6));
    const diff = micros * den - num * 1_000_000n;
    expect(2n * (diff < 0n ? -diff : diff)).toBeLessThanOrEqual(den);
  };

  it('each figure is the exact ratio of the sums, rounded once to 6 dp (property)', () => {
    fc.assert(
      fc.property(vaultsArb, (vaults) => {
        const f = strategyLpFigures(vaults, month);
        let fees = 0n;
        let rewards = 0n;
        let divergence = 0n;
        let capital = 0n;
        let funded = 0;
        let open = 0;
        let inRange = 0;
        let rebalances = 0;
        for (const v of vaults) {
          fees += v.feesUsd;
          rewards += v.rewardsUsd;
          divergence += v.divergenceUsd;
          capital += v.capitalMs;
          funded += v.fundedMs;
          open += v.openMs;
          inRange += v.inRangeMs;
          rebalances += v.rebalances;
        }
        const rates = funded >= DAY;
        if (rates && capital > 0n) {
          within(f.feeApr, fees * YEAR_MS, capital);
          within(f.rewardApr, rewards * YEAR_MS, capital);
          within(f.divergenceApr, divergence * YEAR_MS, capital);
        } else expect([f.feeApr, f.rewardApr, f.divergenceApr]).toEqual([null, null, null]);
        if (rates) within(f.rebalancesPerWeek, BigInt(rebalances) * WEEK_MS, BigInt(funded));
        else expect(f.rebalancesPerWeek).toBeNull();
        if (open > 0) {
          within(f.timeInRange, BigInt(inRange), BigInt(open));
          expect(f.timeInRange).toBeGreaterThanOrEqual(0);
          expect(f.timeInRange).toBeLessThanOrEqual(1);
        } else expect(f.timeInRange).toBeNull();
        expect(f.maxDrawdown).toBe(Math.round(maxDrawdown(month) * 1e6) / 1e6);
      }),
    );
  });

  it('the same figures whatever the vaults’ order or however an entry is split (property)', () => {
    fc.assert(
      fc.property(vaultsArb, fc.nat(), fc.nat(), (vaults, seed, cut) => {
        const whole = strategyLpFigures(vaults, month);
        const rot = seed % Math.max(1, vaults.length);
        const shuffled = [...vaults.slice(rot), ...vaults.slice(0, rot)].reverse();
        expect(strategyLpFigures(shuffled, month)).toEqual(whole);
        if (vaults.length === 0) return;
        // One vault's entry as two (its intervals before and after a switch back, say).
        const v = vaults[cut % vaults.length]!;
        const half = entry({
          feesUsd: v.feesUsd / 2n,
          capitalMs: v.capitalMs / 3n,
          fundedMs: Math.floor(v.fundedMs / 2),
          openMs: Math.floor(v.openMs / 2),
          inRangeMs: Math.min(Math.floor(v.inRangeMs / 2), Math.floor(v.openMs / 2)),
          rebalances: Math.floor(v.rebalances / 2),
          divergenceUsd: v.divergenceUsd / 5n,
        });
        const rest = entry({
          feesUsd: v.feesUsd - half.feesUsd,
          rewardsUsd: v.rewardsUsd,
          capitalMs: v.capitalMs - half.capitalMs,
          fundedMs: v.fundedMs - half.fundedMs,
          openMs: v.openMs - half.openMs,
          inRangeMs: v.inRangeMs - half.inRangeMs,
          rebalances: v.rebalances - half.rebalances,
          divergenceUsd: v.divergenceUsd - half.divergenceUsd,
        });
        const split = vaults.flatMap((x) => (x === v ? [half, rest] : [x]));
        expect(sumStrategyLp(split)).toEqual(sumStrategyLp(vaults));
        expect(strategyLpFigures(split, month)).toEqual(whole);
      }),
    );
  });
});

const foldAll = (rs: readonly VaultRecord[]): VaultState =>
  rs.reduce<VaultState | undefined>((s, r) => foldRecord(s, r), undefined)!;

/** What a stored state's JSON holds under lp.byStrategy, read back. */
const stored = (s: VaultState) =>
  parseStrategyLp(
    (JSON.parse(JSON.stringify(serializeState(s))) as { lp: { byStrategy: unknown } }).lp.byStrategy,
  );

/** Every strategy's entry of a state summed: the vault's own figures, when nothing is lost. */
const totals = (s: VaultState) => {
  const lp = s.lp!;
  return entry({
    feesUsd: lp.feesUsd,
    rewardsUsd: lp.rewardsUsd,
    capitalMs: lp.capitalMs,
    fundedMs: lp.fundedMs,
    openMs: lp.openMs,
    inRangeMs: lp.inRangeMs,
    rebalances: lp.rebalances,
    divergenceUsd: lp.divergenceUsd,
  });
};

describe('a vault’s byStrategy entries', () => {
  it('read back from its stored state JSON; a switch credits what follows to the new strategy', () => {
    const h = new History();
    const rs: VaultRecord[] = [h.created(), h.deposit(WETH, eth(1)), h.deposit(USDC, usdc(2000))];
    h.ts += DAY / 1000;
    rs.push(h.mark());
    rs.push(h.record('strategy.selected', { strategy: 'narrow-eth' }));
    h.ts += (2 * DAY) / 1000;
    rs.push(h.mark());
    const s = foldAll(rs);
    const by = figuresByStrategy(s);
    expect(Object.keys(by).sort()).toEqual(['narrow-eth', 'wide-eth']);
    // ~4,000 USD for a day under wide-eth (then 12 s to the switch), two days under narrow-eth.
    expect(by['wide-eth']!.fundedMs).toBeGreaterThanOrEqual(DAY);
    expect(by['narrow-eth']!.fundedMs).toBeGreaterThanOrEqual(2 * DAY);
    expect(by['narrow-eth']!.capitalMs).toBeGreaterThan(by['wide-eth']!.capitalMs);
    expect(stored(s)).toEqual(by);
    expect(sumStrategyLp(Object.values(by))).toEqual(totals(s));
    expect(() => parseStrategyLp({ wide: { feesUsd: 1 } })).toThrow();
  });

  it('a switch inside a block: the interval before its end is the earlier strategy’s, what follows the switch the new one’s, whatever JSON reloads cut it', () => {
    const h = new History();
    const head: VaultRecord[] = [h.created(), h.deposit(WETH, eth(1)), h.deposit(USDC, usdc(2000))];
    h.ts += DAY / 1000;
    // One block: a switch, then a deposit (an event of the new strategy), then its end.
    const block = oneBlock([
      h.record('strategy.selected', { strategy: 'narrow-eth' }),
      h.deposit(USDC, usdc(10)),
      h.mark(),
    ]);
    h.ts += DAY / 1000;
    const tail = [h.mark()];
    const all = [...head, ...block, ...tail];
    const s = foldAll(all);
    const by = figuresByStrategy(s);
    // The day up to the switching block's end ran under wide-eth; the day after, narrow-eth.
    const blockEnd = foldAll([...head, ...block]);
    expect(blockEnd.lp!.fundedMs).toBeGreaterThanOrEqual(DAY);
    expect(by['wide-eth']!.fundedMs).toBe(blockEnd.lp!.fundedMs);
    expect(by['wide-eth']!.capitalMs).toBe(blockEnd.lp!.capitalMs);
    expect(by['narrow-eth']!.fundedMs).toBe(s.updatedAt - blockEnd.updatedAt);
    expect(by['narrow-eth']!.capitalMs).toBe(s.lp!.capitalMs - blockEnd.lp!.capitalMs);
    // Reloaded from JSON after every record (inside the block too): the same state and entries.
    let r: VaultState | undefined;
    for (const x of all) r = deserializeState(JSON.parse(JSON.stringify(serializeState(foldRecord(r, x)))));
    expect(r).toEqual(s);
    expect(stored(s)).toEqual(by);
  });

  it('over random histories with strategy switches, the entries add up to the vault’s figures (property)', () => {
    fc.assert(
      fc.property(
        stepsArb,
        fc.array(fc.constantFrom('wide-eth', 'narrow-eth', 'flat'), { minLength: 1, maxLength: 8 }),
        (steps, switches) => {
          // Some marks become strategy selections (same block, context and place in the log).
          let k = 0;
          const rs = buildHistory(steps).map(({ record: r }, i) =>
            r.type === 'mark' && i % 2 === 0 && k < switches.length
              ? ({
                  ...r,
                  type: 'strategy.selected',
                  payload: { strategy: switches[k++]! },
                  txHash: `0x${(i + 1).toString(16).padStart(64, '0')}`,
                  txIndex: 0,
                  logIndex: 0,
                } as VaultRecord)
              : r,
          );
          const s = foldAll(rs);
          const by = figuresByStrategy(s);
          expect(sumStrategyLp(Object.values(by))).toEqual(totals(s));
          const ran = new Set(['wide-eth', ...switches.slice(0, k)]);
          for (const strategy of Object.keys(by)) expect(ran.has(strategy)).toBe(true);
          expect(stored(s)).toEqual(by);
        },
      ),
      { numRuns: 60 },
    );
  });
});
