import { describe, expect, it } from 'vitest';
import { aggregateDailyReturns, dailyReturns, type EquitySample, utcDay } from './daily.js';
import { realisedStats, strategyStats } from './stats.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2025, 0, 1);

describe('dailyReturns (time-weighted, flows removed)', () => {
  it('matches a hand computation with a deposit and a withdrawal mid-day', () => {
    const pts: EquitySample[] = [
      { ts: T0 + 1000, valueUsd: 1000, capitalInUsd: 1000, capitalOutUsd: 0 }, // day 1: funded
      { ts: T0 + DAY + 1000, valueUsd: 1010, capitalInUsd: 1000, capitalOutUsd: 0 }, // +1 %
      { ts: T0 + DAY + 2000, valueUsd: 1510, capitalInUsd: 1500, capitalOutUsd: 0 }, // deposit 500, flat
      { ts: T0 + DAY + 3000, valueUsd: 1540.2, capitalInUsd: 1500, capitalOutUsd: 0 }, // +2 %
      { ts: T0 + 2 * DAY + 1000, valueUsd: 1240.2, capitalInUsd: 1500, capitalOutUsd: 300 }, // withdraw 300, flat
      { ts: T0 + 2 * DAY + 2000, valueUsd: 1227.798, capitalInUsd: 1500, capitalOutUsd: 300 }, // −1 %
    ];
    const d = dailyReturns(pts);
    expect(d.map((x) => x.day)).toEqual(['2025-01-02', '2025-01-03']);
    // day 2: 1.01 · (1510 − 500)/1010 · 1.02 − 1 = 1.01 · 1 · 1.02 − 1
    expect(d[0]!.r).toBeCloseTo(1.01 * 1.02 - 1, 12);
    expect(d[0]!.weightUsd).toBe(1000);
    // day 3: (1240.2 + 300)/1540.2 = 1, then 1227.798/1240.2 = 0.99
    expect(d[1]!.r).toBeCloseTo(-0.01, 12);
    expect(d[1]!.weightUsd).toBe(1540.2);
  });

  it('skips sub-periods with no capital and sorts its input', () => {
    const pts: EquitySample[] = [
      { ts: T0 + DAY, valueUsd: 110, capitalInUsd: 100, capitalOutUsd: 0 },
      { ts: T0, valueUsd: 0, capitalInUsd: 0, capitalOutUsd: 0 },
      { ts: T0 + 10, valueUsd: 100, capitalInUsd: 100, capitalOutUsd: 0 },
    ];
    expect(dailyReturns(pts)).toEqual([{ day: '2025-01-02', r: 0.10000000000000009, weightUsd: 100 }]);
    expect(utcDay(T0 + DAY - 1)).toBe('2025-01-01');
  });

  it('aggregates members by value weight', () => {
    const agg = aggregateDailyReturns([
      [{ day: '2025-01-02', r: 0.01, weightUsd: 1000 }],
      [
        { day: '2025-01-02', r: 0.04, weightUsd: 3000 },
        { day: '2025-01-01', r: 0.5, weightUsd: 10 },
      ],
    ]);
    expect(agg.map((d) => d.day)).toEqual(['2025-01-01', '2025-01-02']);
    expect(agg[1]!.r).toBeCloseTo((0.01 * 1000 + 0.04 * 3000) / 4000, 12);
  });
});

describe('realisedStats', () => {
  const returns = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 0.002 : -0.001));

  it('is null below the minimum history (29 returns), numbers from 30', () => {
    expect(realisedStats(returns(29))).toEqual({ liveApr: null, sigma: null, days: 29 });
    const s = realisedStats(returns(30));
    expect(s.liveApr).not.toBeNull();
    expect(s.sigma).not.toBeNull();
    expect(realisedStats(returns(5), { minDailyReturns: 5 }).liveApr).not.toBeNull();
  });

  it('annualises the chained return as R·365/n and the sample stdev by √365', () => {
    const rs = returns(30);
    const R = 1.002 ** 15 * 0.999 ** 15 - 1;
    const mean = (0.002 - 0.001) / 2;
    const sd = Math.sqrt((30 * 0.0015 ** 2) / 29);
    const s = realisedStats(rs);
    expect(s.liveApr).toBeCloseTo((R * 365) / 30, 12);
    expect(s.sigma).toBeCloseTo(sd * Math.sqrt(365), 12);
    expect(mean).toBeCloseTo(0.0005, 12);
  });

  it('strategyStats chains equity → daily → aggregate → figures', () => {
    const pts: EquitySample[] = Array.from({ length: 32 }, (_, i) => ({
      ts: T0 + i * DAY,
      valueUsd: 1000 * 1.001 ** i,
      capitalInUsd: 1000,
      capitalOutUsd: 0,
    }));
    const s = strategyStats([pts, pts]);
    expect(s.days).toBe(31);
    expect(s.liveApr).toBeCloseTo(((1.001 ** 31 - 1) * 365) / 31, 9);
    expect(s.sigma).toBeCloseTo(0, 9);
  });
});
