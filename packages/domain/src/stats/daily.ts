import type { EquitySample } from '../equity/index.js';

/**
 * Realised, flow-neutral daily returns from a vault's equity points (time-weighted return).
 *
 * Each point carries the vault's return index I (fold/return-index.ts), chained exactly by the fold per
 * block end: a vault's records of one block are valued at the block's end, so I steps once per
 * block, over the value net of the performance fee accrued and not yet charged, N = V − rate ·
 * max(0, V − HW): I ← I · (N_end − F) / N_start with F the block's capital flows, so returns are
 * net of the fee as it is earned and a charge of the fee accrued moves nothing (the fee is a
 * return of the days and the strategy that earned the gain, not of the day it is charged).
 * Flows are removed and nothing is computed from rounded USD figures. A block whose start is
 * under MIN_RETURN_BASE_USD (1 USD) leaves I unchanged: a return on dust is noise. The points of one block share its time, so its growth lands whole on one day.
 *
 * Sub-period k runs from point k−1 to point k; its growth is I_k / I_{k−1} and it counts for the
 * strategy in force at point k−1 (a `strategy.selected` record always makes a point, so a switch
 * never moves earlier sub-periods to the new strategy). It lands on the UTC day of its end point;
 * sub-periods ending on the same day are chained: R_day = Π(I_k / I_{k−1}) − 1.
 *
 * Elapsed days, not days with points: on every UTC day whose start finds the vault holding at
 * least the minimum value under a strategy, the vault has a daily return for that strategy — 0 on
 * a quiet day (no point: nothing moved), weighted by its value at the start of the day. A
 * sub-period spanning several days lands whole on the day it ends (the days before it read 0).
 *
 * Complete days only, up to `asOf` (how far the log has been folded, never the wall clock): day d
 * counts iff it has ended by asOf, (d + 1) · 86,400,000 ≤ asOf. The day still in progress is left
 * out, sub-periods ending in it included: a day's return is final only once its last block can
 * no longer arrive, and counting it early would make the figures move with where in the day the
 * fold stands rather than with the log.
 */
export type { EquitySample };

export interface DailyReturn {
  /** UTC day, 'YYYY-MM-DD'. */
  day: string;
  /** Chained return of the day, e.g. 0.001 = +0.1 %. */
  r: number;
  /** Value at the start of the day (or of its first sub-period): the weight for aggregation. */
  weightUsd: number;
}

/** Mirrors MIN_RETURN_BASE_USD of the fold (1 USD). */
export const MIN_RETURN_BASE = 1;

const DAY_MS = 86_400_000;

export function utcDay(ts: number): string {
  return new Date(Math.floor(ts / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
}

export interface DailyOptions {
  /**
   * How far the log has been folded (Unix ms, block time): only UTC days ended by then count.
   * Default the last point's time; pass how far THIS vault has been folded (its partition's
   * extent, or its own last record when it is held at a gap: stats.ts VaultSeries), never the
   * projection's latest record — a vault folded less far would read its unfolded days as quiet.
   */
  asOf?: number;
  /** Minimum value at the start of a day for the vault to take part (USD); default 1. */
  minBaseUsd?: number;
}

/** One vault's daily returns, by the strategy they count for; `points` in fold order. */
export function dailyReturnsByStrategy(
  points: readonly EquitySample[],
  opts: DailyOptions = {},
): Map<string, DailyReturn[]> {
  // stable sort: points of one instant keep their fold order
  const pts = [...points].sort((a, b) => a.ts - b.ts);
  if (pts.length === 0) return new Map();
  // The last complete day: d + 1 ≤ asOf / DAY_MS, i.e. d ≤ floor(asOf / DAY_MS) − 1.
  const last = Math.floor((opts.asOf ?? pts[pts.length - 1]!.ts) / DAY_MS) - 1;
  const out = new Map<string, DailyReturn[]>();
  for (const c of rollDays(null, pts, last, opts.minBaseUsd).cells) {
    let list = out.get(c.strategy);
    if (!list) {
      list = [];
      out.set(c.strategy, list);
    }
    list.push({ day: utcDay(c.day * DAY_MS), r: c.r, weightUsd: c.weightUsd });
  }
  return out;
}

/** A vault's daily return under one strategy on one UTC day (`day`: Unix ms / 86,400,000). */
export interface DayCell {
  day: number;
  strategy: string;
  r: number;
  weightUsd: number;
}

/**
 * Where a vault's daily returns stand: every day before `nextDay` is rolled up; `last` is its last
 * point before `nextDay`'s start (the next sub-period starts from it; its value weighs the quiet
 * days after it); `firstDay` is the day of its first point (its days start the day after).
 */
export interface DayCarry<P extends EquitySample = EquitySample> {
  firstDay: number;
  nextDay: number;
  last: P;
}

/**
 * Rolls a vault's daily returns forward through day `lastDay` (inclusive): from `carry` (null: the
 * vault's first point) over `points`, its points from `carry.nextDay`'s start on, ordered by (ts,
 * fold order). Returns the cells of the days rolled, ascending, and the new carry (null while the
 * vault has no point by then). Points of days after `lastDay` are not consumed: pass them again.
 *
 * Rolling day by day, in as many steps as one likes, gives exactly the cells of rolling every point
 * at once (`dailyReturnsByStrategy` is this with no carry): a day's sub-periods are multiplied in
 * the same order, and a day is only ever rolled whole — so stats can be kept from daily rollups,
 * reading each point once, and equal those read from every point.
 */
export function rollDays<P extends EquitySample>(
  carry: DayCarry<P> | null,
  points: readonly P[],
  lastDay: number,
  minBaseUsd: number = MIN_RETURN_BASE,
): { cells: DayCell[]; carry: DayCarry<P> | null } {
  const fromDay = carry?.nextDay ?? Number.NEGATIVE_INFINITY;
  if (lastDay < fromDay) return { cells: [], carry };
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
  let prev = carry?.last ?? null;
  let firstDay = carry?.firstDay ?? 0;
  let n = 0; // points consumed: points[0 .. n)
  for (; n < points.length; n++) {
    const p = points[n]!;
    const day = Math.floor(p.ts / DAY_MS);
    if (day > lastDay) break; // ordered: every later sub-period ends in a day not rolled now
    if (prev === null) firstDay = day;
    else if (prev.valueUsd >= minBaseUsd && prev.returnIndex > 0)
      cell(prev.strategy, day, prev.valueUsd).growth *= p.returnIndex / prev.returnIndex;
    prev = p;
  }
  if (prev === null) return { cells: [], carry: null };
  // The value at each day's start: the last point before it (the carry's, then those consumed).
  let start = carry?.last ?? null;
  let j = 0;
  for (let d = Math.max(firstDay + 1, fromDay); d <= lastDay; d++) {
    while (j < n && points[j]!.ts < d * DAY_MS) start = points[j++]!;
    if (start === null || !(start.valueUsd >= minBaseUsd)) continue;
    cell(start.strategy, d, start.valueUsd).weightUsd = start.valueUsd;
  }
  const out = [...cells.values()]
    .sort((a, b) => a.dayIndex - b.dayIndex)
    .map((c) => ({ day: c.dayIndex, strategy: c.strategy, r: c.growth - 1, weightUsd: c.weightUsd }));
  return { cells: out, carry: { firstDay, nextDay: lastDay + 1, last: prev } };
}

/**
 * A strategy's daily returns from its member vaults' daily returns: for each day, the mean of the
 * members' returns weighted by their value at the start of that day (Σ w·r / Σ w); a member
 * without a return that day (no capital under the strategy) does not take part. Days on which no
 * member held capital under the strategy are not operating days and yield nothing. Ascending.
 */
export function aggregateDailyReturns(members: readonly (readonly DailyReturn[])[]): DailyReturn[] {
  const byDay = new Map<string, { wr: number; w: number }>();
  for (const series of members) {
    for (const d of series) {
      const acc = byDay.get(d.day) ?? { wr: 0, w: 0 };
      acc.wr += d.weightUsd * d.r;
      acc.w += d.weightUsd;
      byDay.set(d.day, acc);
    }
  }
  return [...byDay.entries()]
    .filter(([, a]) => a.w > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([day, a]) => ({ day, r: a.wr / a.w, weightUsd: a.w }));
}
