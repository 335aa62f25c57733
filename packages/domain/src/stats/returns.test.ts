import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  aggregateDailyReturns,
  type DailyOptions,
  type DailyReturn,
  type DayCarry,
  type DayCell,
  dailyReturnsByStrategy,
  type EquitySample,
  rollDays,
  utcDay,
} from './daily.js';
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
    const d = dailyReturnsByStrategy(pts, { asOf: T0 + 3 * DAY }).get('wide')!; // both days ended
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
    const asOf = T0 + 61 * DAY; // the 60th day has ended
    const s = strategyStats([pts], { asOf });
    expect(s.days).toBe(60); // elapsed days, not the 30 days with points
    expect(s.liveApr).toBeCloseTo((0.1 * 365) / 60, 9); // ≈ 0.608, not twice that
    const daily = dailyReturnsByStrategy(pts, { asOf }).get('wide')!;
    expect(daily.filter((d) => d.r === 0)).toHaveLength(30); // the quiet days are zero returns
  });

  it('a quiet tail up to asOf counts as zero returns', () => {
    const pts = series([
      { ts: T0, valueUsd: 1000, capitalInUsd: 1000 },
      { ts: T0 + DAY, valueUsd: 1100, capitalInUsd: 1000 },
    ]);
    const s = strategyStats([pts], { asOf: T0 + 11 * DAY, minDailyReturns: 2 });
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
    const asOf = T0 + 3 * DAY;
    const d = dailyReturnsByStrategy(raw, { asOf }).get('wide')!;
    expect(d).toEqual([{ day: '2025-01-03', r: expect.closeTo(0.01, 12), weightUsd: 1000.000002 }]);
    expect(dailyReturnsByStrategy(raw, { asOf, minBaseUsd: 0 }).get('wide')![0]!.r).toBe(0); // the index, not the figures
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
    const all = strategiesStats([series(raw)], { asOf: T0 + 61 * DAY });
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
    const s = strategyStats([busy, quiet], { asOf: T0 + 3 * DAY, minDailyReturns: 2 });
    expect(s.days).toBe(2);
    expect(s.liveApr).toBeCloseTo((((1 + 0.01 / 4) * (1 + (0.01 * 1010) / 4010) - 1) * 365) / 2, 12);
  });
});

describe("complete days only, as of the fold's extent (never the wall clock)", () => {
  it('a sub-period ending in the day of asOf is not counted; the day counts once asOf passes its end', () => {
    const pts = series([
      { ts: T0 + 1000, valueUsd: 1000, capitalInUsd: 1000 },
      { ts: T0 + DAY + 5 * 3_600_000, valueUsd: 1010, capitalInUsd: 1000 }, // +1 % on day 2
    ]);
    // Default asOf is the last point: its day is still in progress.
    expect(dailyReturnsByStrategy(pts).size).toBe(0);
    expect(dailyReturnsByStrategy(pts, { asOf: T0 + 2 * DAY - 1 }).size).toBe(0);
    expect(dailyReturnsByStrategy(pts, { asOf: T0 + 2 * DAY }).get('wide')).toEqual([
      { day: '2025-01-02', r: expect.closeTo(0.01, 12), weightUsd: 1000 },
    ]);
    // A quiet day too counts only once it has ended.
    const quiet = (asOf: number) =>
      dailyReturnsByStrategy(pts, { asOf })
        .get('wide')!
        .map((d) => d.day);
    expect(quiet(T0 + 3 * DAY - 1)).toEqual(['2025-01-02']);
    expect(quiet(T0 + 3 * DAY)).toEqual(['2025-01-02', '2025-01-03']);
    expect(strategyStats([pts], { asOf: T0 + 3 * DAY - 1, minDailyReturns: 2 })).toEqual({
      liveApr: null,
      sigma: null,
      days: 1,
    });
    expect(strategyStats([pts], { asOf: T0 + 3 * DAY, minDailyReturns: 2 }).days).toBe(2);
  });

  /** Vaults' equity series: each a start, then steps of a gap, a growth, a flow, a strategy. */
  const vaultsArb = fc.array(
    fc.record({
      start: fc.integer({ min: 0, max: 3 * DAY }),
      funded: fc.integer({ min: 1, max: 10_000 }),
      steps: fc.array(
        fc.record({
          gap: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 * DAY })),
          bps: fc.integer({ min: -500, max: 500 }),
          flow: fc.integer({ min: -500, max: 500 }),
          strategy: fc.constantFrom('wide', 'narrow'),
        }),
        { maxLength: 40 },
      ),
    }),
    { minLength: 1, maxLength: 4 },
  );
  const build = (vaults: typeof vaultsArb extends fc.Arbitrary<infer T> ? T : never) =>
    vaults.map(({ start, funded, steps }) => {
      let ts = T0 + start;
      let v = funded;
      let cin = funded;
      let cout = 0;
      const raw: Raw[] = [{ ts, valueUsd: v, capitalInUsd: cin, capitalOutUsd: 0 }];
      for (const st of steps) {
        ts += st.gap;
        v *= 1 + st.bps / 10_000;
        const flow = Math.max(st.flow, -v / 2); // never withdraws more than it holds
        v += flow;
        if (flow >= 0) cin += flow;
        else cout -= flow;
        raw.push({ ts, valueUsd: v, capitalInUsd: cin, capitalOutUsd: cout, strategy: st.strategy });
      }
      return series(raw);
    });
  // The fold's extent: the last folded record's time, at or after every vault's last point.
  const extentOf = (vaults: readonly EquitySample[][], after: number) =>
    Math.max(...vaults.map((p) => p.at(-1)!.ts)) + after;
  const afterArb = fc.oneof(
    fc.constant(0),
    fc.integer({ min: 0, max: DAY }),
    fc.integer({ min: 0, max: 5 * DAY }),
  );

  it('the same log gives the same figures whatever the wall clock', () => {
    fc.assert(
      fc.property(
        vaultsArb,
        afterArb,
        fc.array(fc.integer({ min: 0, max: 4_000_000_000_000 }), { minLength: 1, maxLength: 3 }),
        (raw, after, clocks) => {
          const vaults = build(raw);
          const asOf = extentOf(vaults, after);
          const figures = () => strategiesStats(vaults, { asOf, minDailyReturns: 2 });
          vi.useFakeTimers({ toFake: ['Date'] });
          try {
            vi.setSystemTime(asOf);
            const inTime = figures();
            for (const now of clocks) {
              vi.setSystemTime(now); // behind, ahead or wherever: the wall clock is no input
              expect(figures()).toEqual(inTime);
            }
          } finally {
            vi.useRealTimers();
          }
        },
      ),
    );
  });

  it('figures do not move while the fold advances within one UTC day', () => {
    fc.assert(
      fc.property(vaultsArb, afterArb, fc.integer({ min: 0, max: DAY - 1 }), (raw, after, within) => {
        const vaults = build(raw);
        const asOf = extentOf(vaults, after);
        // Earlier in the same day, the fold had folded only the points up to then (a vault not
        // created yet has none); later in it, maybe no more than now.
        const then = Math.floor(asOf / DAY) * DAY + within;
        const folded = vaults.map((p) => p.filter((x) => x.ts <= then)).filter((p) => p.length > 0);
        const opts = { minDailyReturns: 2 };
        const now = strategiesStats(vaults, { ...opts, asOf });
        expect(strategiesStats(folded, { ...opts, asOf: then })).toEqual(now);
        // Once the day has ended it counts: days are only ever added as the fold moves on.
        const next = strategiesStats(vaults, { ...opts, asOf: (Math.floor(asOf / DAY) + 1) * DAY });
        for (const [id, f] of now) expect(next.get(id)!.days).toBeGreaterThanOrEqual(f.days);
      }),
    );
  });

  it('rolling days in any steps gives the cells of every point at once, and the definition before it', () => {
    fc.assert(
      fc.property(
        vaultsArb,
        afterArb,
        fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 6 }),
        (raw, after, cutsRaw) => {
          const vaults = build(raw);
          const asOf = extentOf(vaults, after);
          const last = Math.floor(asOf / DAY) - 1;
          for (const pts of vaults) {
            const sorted = [...pts].sort((a, b) => a.ts - b.ts);
            const whole = dailyReturnsByStrategy(pts, { asOf });
            expect(whole).toEqual(referenceDaily(pts, { asOf }));
            // Rolled in steps ending at increasing days (some before the first point, some repeated).
            const first = Math.floor(sorted[0]!.ts / DAY);
            const cuts = [
              ...cutsRaw
                .map((c) => Math.min(last, first - 3 + (c % Math.max(1, last - first + 5))))
                .sort((a, b) => a - b),
              last,
            ];
            let carry: DayCarry | null = null;
            const cells: DayCell[] = [];
            for (const cut of cuts) {
              const from = carry ? carry.nextDay * DAY : Number.NEGATIVE_INFINITY;
              const r: { cells: DayCell[]; carry: DayCarry | null } = rollDays(
                carry,
                sorted.filter((p) => p.ts >= from),
                cut,
              );
              for (const c of r.cells) expect(c.day).toBeLessThanOrEqual(cut);
              cells.push(...r.cells);
              carry = r.carry;
            }
            const grouped = new Map<string, DailyReturn[]>();
            for (const c of cells) {
              const list = grouped.get(c.strategy) ?? [];
              list.push({ day: utcDay(c.day * DAY), r: c.r, weightUsd: c.weightUsd });
              grouped.set(c.strategy, list);
            }
            expect(grouped).toEqual(whole);
          }
        },
      ),
    );
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

describe('each vault counts up to how far it was folded (issue #43 item 2)', () => {
  /** A vault of 1,000 earning +0.1 % a day, a point at 01:00 of each of its `days` days. */
  const earning = (days: number): EquitySample[] =>
    Array.from({ length: days + 1 }, (_, d) => ({
      ts: T0 + d * DAY + 3_600_000,
      valueUsd: 1000 * 1.001 ** d,
      capitalInUsd: 1000,
      capitalOutUsd: 0,
      strategy: 'wide',
      returnIndex: 1.001 ** d,
    }));
  const ahead = earning(45); // 44 complete days by its last point
  const behind = earning(9); // its partition folded 35 days less far

  it('two vaults of one strategy, one folded 35 days less far: liveApr 0.373, sigma 0 (was 0.224, 0.0039)', () => {
    const opts = { minDailyReturns: 2 };
    const right = strategyStats(
      [
        { points: ahead, asOf: ahead.at(-1)!.ts },
        { points: behind, asOf: behind.at(-1)!.ts },
      ],
      opts,
    );
    expect(right.days).toBe(44);
    expect(right.liveApr).toBeCloseTo(((1.001 ** 44 - 1) * 365) / 44, 9);
    expect(right.liveApr).toBeCloseTo(0.373, 3);
    expect(right.sigma).toBeCloseTo(0, 9);
    // One extent for every vault (the projection's latest record) read the lagging vault's 35
    // unfolded days as quiet days of the strategy.
    const wrong = strategyStats([ahead, behind], { ...opts, asOf: ahead.at(-1)!.ts });
    expect(wrong.liveApr).toBeCloseTo(0.224, 3);
    expect(wrong.sigma).toBeCloseTo(0.0039, 4);
  });

  it('a vault without its own extent takes the shared one; a bare series its last point', () => {
    const asOf = ahead.at(-1)!.ts;
    expect(strategiesStats([{ points: ahead }], { asOf, minDailyReturns: 2 })).toEqual(
      strategiesStats([ahead], { asOf, minDailyReturns: 2 }),
    );
  });
});

/** The definition before rollDays (every point at once): what the rolled cells must equal. */
function referenceDaily(
  points: readonly EquitySample[],
  opts: DailyOptions = {},
): Map<string, DailyReturn[]> {
  const min = opts.minBaseUsd ?? 1;
  // stable sort: points of one instant keep their fold order
  const pts = [...points].sort((a, b) => a.ts - b.ts);
  const cells = new Map<string, { strategy: string; dayIndex: number; growth: number; weightUsd: number }>();
  const cell = (strategy: string, dayIndex: number, weightUsd: number) => {
    const key = `${dayIndex}\u0000${strategy}`;
    let c = cells.get(key);
    if (!c) {
      c = { strategy, dayIndex, growth: 1, weightUsd };
      cells.set(key, c);
    }
    return c;
  };
  if (pts.length === 0) return new Map();
  // The last complete day: d + 1 ≤ asOf / DAY, i.e. d ≤ floor(asOf / DAY) − 1.
  const last = Math.floor((opts.asOf ?? pts[pts.length - 1]!.ts) / DAY) - 1;
  for (let k = 1; k < pts.length; k++) {
    const prev = pts[k - 1]!;
    const p = pts[k]!;
    const day = Math.floor(p.ts / DAY);
    if (day > last) break; // sorted: every later sub-period ends in a day not yet complete
    if (!(prev.valueUsd >= min) || !(prev.returnIndex > 0)) continue;
    cell(prev.strategy, day, prev.valueUsd).growth *= p.returnIndex / prev.returnIndex;
  }
  let j = 0; // points before the current day's start: pts[0 .. j)
  for (let d = Math.floor(pts[0]!.ts / DAY) + 1; d <= last; d++) {
    while (j < pts.length && pts[j]!.ts < d * DAY) j++;
    const start = pts[j - 1]!;
    if (!(start.valueUsd >= min)) continue;
    cell(start.strategy, d, start.valueUsd).weightUsd = start.valueUsd;
  }
  const out = new Map<string, DailyReturn[]>();
  for (const c of [...cells.values()].sort((a, b) => a.dayIndex - b.dayIndex)) {
    let list = out.get(c.strategy);
    if (!list) {
      list = [];
      out.set(c.strategy, list);
    }
    list.push({ day: utcDay(c.dayIndex * DAY), r: c.growth - 1, weightUsd: c.weightUsd });
  }
  return out;
}
