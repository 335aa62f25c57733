import { describe, expect, it } from 'vitest';
import { aggregateDailyReturns, dailyReturnsByStrategy, type EquitySample, utcDay } from './daily.js';
import { realisedStats, strategiesStats, strategyStats } from './stats.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2025, 0, 1);

type Raw = { ts: number; valueUsd: number; capitalInUsd: number; capitalOutUsd?: number; strategy?: string };

/** Points with the return index the fold would chain (flows removed, dust bases skipped). */
function series(raw: readonly Raw[]): EquitySample[] {
  const out: EquitySample[] = [];
  for (const r of raw) {
    const p = { capitalOutUsd: 0, strategy: 'wide', ...r, returnIndex: 1 };
    const prev = out.at(-1);
    if (prev) {
      const flow = p.capitalInUsd - prev.capitalInUsd - (p.capitalOutUsd - prev.capitalOutUsd);
      p.returnIndex =
        prev.valueUsd >= 1 ? (prev.returnIndex * (p.valueUsd - flow)) / prev.valueUsd : prev.returnIndex;
    }
    out.push(p);
  }
  return out;
}

describe('daily returns (time-weighted, flows removed, elapsed days)', () => {
  it('matches a hand computation with a deposit and a withdrawal mid-day', () => {
    const pts = series([
      { ts: T0 + 1000, valueUsd: 1000, capitalInUsd: 1000 }, // day 1: funded
      { ts: T0 + DAY + 1000, valueUsd: 1010, capitalInUsd: 1000 }, // +1 %
      { ts: T0 + DAY + 2000, valueUsd: 1510, capitalInUsd: 1500 }, // deposit 500, flat
      { ts: T0 + DAY + 3000, valueUsd: 1540.2, capitalInUsd: 1500 }, // +2 %
      { ts: T0 + 2 * DAY + 1000, valueUsd: 1240.2, capitalInUsd: 1500, capitalOutUsd: 300 }, // −300, flat
      { ts: T0 + 2 * DAY + 2000, valueUsd: 1227.798, capitalInUsd: 1500, capitalOutUsd: 300 }, // −1 %
    ]);
    const d = dailyReturnsByStrategy(pts).get('wide')!;
    expect(d.map((x) => x.day)).toEqual(['2025-01-02', '2025-01-03']);
    expect(d[0]!.r).toBeCloseTo(1.01 * 1.02 - 1, 12);
    expect(d[0]!.weightUsd).toBe(1000);
    expect(d[1]!.r).toBeCloseTo(-0.01, 12);
    expect(d[1]!.weightUsd).toBe(1540.2);
    expect(utcDay(T0 + DAY - 1)).toBe('2025-01-01');
  });

  it('a vault growing 10 % over 60 days with points every other day: liveApr ≈ 10 % × 365/60', () => {
    const g = 1.1 ** (1 / 30); // per two days
    const pts = series(
      Array.from({ length: 31 }, (_, i) => ({
        ts: T0 + 2 * i * DAY + 3_600_000,
        valueUsd: 1000 * g ** i,
        capitalInUsd: 1000,
      })),
    );
    const s = strategyStats([pts]);
    expect(s.days).toBe(60); // elapsed days, not the 30 days with points
    expect(s.liveApr).toBeCloseTo((0.1 * 365) / 60, 9); // ≈ 0.608, not twice that
    const daily = dailyReturnsByStrategy(pts).get('wide')!;
    expect(daily.filter((d) => d.r === 0)).toHaveLength(30); // the quiet days are zero returns
  });

  it('a quiet tail up to asOf counts as zero returns', () => {
    const pts = series([
      { ts: T0, valueUsd: 1000, capitalInUsd: 1000 },
      { ts: T0 + DAY, valueUsd: 1100, capitalInUsd: 1000 },
    ]);
    const s = strategyStats([pts], { asOf: T0 + 10 * DAY, minDailyReturns: 2 });
    expect(s.days).toBe(10);
    expect(s.liveApr).toBeCloseTo((0.1 * 365) / 10, 12);
  });

  it('never a +100 % day from dust: a sub-period starting under 1 USD has no return', () => {
    // rounded points of a vault holding 5·10^-7 USD that receives 1000 USD at unchanged prices:
    // from 6-dp figures, (1000.000001 − 1000) / 0.000001 − 1 would read +0 %… or +100 %.
    const raw = [
      { ts: T0, valueUsd: 0.000001, capitalInUsd: 0.000001, strategy: 'wide', returnIndex: 1 },
      { ts: T0 + DAY, valueUsd: 1000.000002, capitalInUsd: 1000.000001, strategy: 'wide', returnIndex: 1 },
      {
        ts: T0 + 2 * DAY,
        valueUsd: 1010.000002,
        capitalInUsd: 1000.000001,
        strategy: 'wide',
        returnIndex: 1.01,
      },
    ].map((p) => ({ ...p, capitalOutUsd: 0 }));
    const d = dailyReturnsByStrategy(raw).get('wide')!;
    expect(d).toEqual([{ day: '2025-01-03', r: expect.closeTo(0.01, 12), weightUsd: 1000.000002 }]);
    expect(dailyReturnsByStrategy(raw, { minBaseUsd: 0 }).get('wide')![0]!.r).toBe(0); // the index, not the figures
  });

  it('each sub-period counts for the strategy in force then', () => {
    // +10 % over 30 days under "wide", then a switch to "narrow" and flat for 30 days
    const g = 1.1 ** (1 / 30);
    const raw: Raw[] = Array.from({ length: 31 }, (_, i) => ({
      ts: T0 + i * DAY,
      valueUsd: 1000 * g ** i,
      capitalInUsd: 1000,
      strategy: 'wide',
    }));
    raw.push({ ts: T0 + 30 * DAY + 1, valueUsd: 1100, capitalInUsd: 1000, strategy: 'narrow' }); // strategy.selected
    raw.push({ ts: T0 + 60 * DAY, valueUsd: 1100, capitalInUsd: 1000, strategy: 'narrow' });
    const all = strategiesStats([series(raw)]);
    expect(all.get('wide')!.days).toBe(30);
    expect(all.get('wide')!.liveApr).toBeCloseTo((0.1 * 365) / 30, 6);
    expect(all.get('narrow')!.days).toBe(30);
    expect(all.get('narrow')!.liveApr).toBeCloseTo(0, 9);
  });

  it('aggregates members by value weight; a quiet member weighs in with a zero return', () => {
    const agg = aggregateDailyReturns([
      [{ day: '2025-01-02', r: 0.01, weightUsd: 1000 }],
      [
        { day: '2025-01-02', r: 0.04, weightUsd: 3000 },
        { day: '2025-01-01', r: 0.5, weightUsd: 10 },
      ],
    ]);
    expect(agg.map((d) => d.day)).toEqual(['2025-01-01', '2025-01-02']);
    expect(agg[1]!.r).toBeCloseTo((0.01 * 1000 + 0.04 * 3000) / 4000, 12);
    const busy = series([
      { ts: T0, valueUsd: 1000, capitalInUsd: 1000 },
      { ts: T0 + DAY, valueUsd: 1010, capitalInUsd: 1000 },
      { ts: T0 + 2 * DAY, valueUsd: 1020.1, capitalInUsd: 1000 },
    ]);
    const quiet = series([{ ts: T0, valueUsd: 3000, capitalInUsd: 3000 }]);
    const s = strategyStats([busy, quiet], { asOf: T0 + 2 * DAY, minDailyReturns: 2 });
    expect(s.days).toBe(2);
    expect(s.liveApr).toBeCloseTo((((1 + 0.01 / 4) * (1 + (0.01 * 1010) / 4010) - 1) * 365) / 2, 12);
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
    const sd = Math.sqrt((30 * 0.0015 ** 2) / 29);
    const s = realisedStats(rs);
    expect(s.liveApr).toBeCloseTo((R * 365) / 30, 12);
    expect(s.sigma).toBeCloseTo(sd * Math.sqrt(365), 12);
  });
});
