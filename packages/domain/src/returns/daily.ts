/**
 * Realised, flow-neutral returns from a vault's equity points (time-weighted return).
 *
 * Between consecutive points k−1 and k the net flow is F_k = ΔcapitalIn − ΔcapitalOut, and V_k is
 * the value just after it, so the sub-period return is r_k = (V_k − F_k) / V_{k−1} − 1. A
 * sub-period that starts with V_{k−1} ≤ 0 (no capital) has no return and is skipped. Sub-period
 * returns are chained within the UTC day of their end point:
 * R_day = Π(1 + r_k) − 1. A day gets a daily return when at least one sub-period with capital
 * ends in it; days without points yield nothing (the next point's sub-period spans the gap and
 * lands on the day it ends). Performance fees are not flows, so returns are net of fees.
 */
export interface EquitySample {
  /** Unix ms. */
  ts: number;
  valueUsd: number;
  capitalInUsd: number;
  capitalOutUsd: number;
}

export interface DailyReturn {
  /** UTC day, 'YYYY-MM-DD'. */
  day: string;
  /** Chained return of the day, e.g. 0.001 = +0.1 %. */
  r: number;
  /** Value at the start of the day's first sub-period (the weight for aggregation). */
  weightUsd: number;
}

const DAY_MS = 86_400_000;

export function utcDay(ts: number): string {
  return new Date(Math.floor(ts / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
}

/** Daily time-weighted returns of one vault; `points` in any order (sorted by ts here). */
export function dailyReturns(points: readonly EquitySample[]): DailyReturn[] {
  const sorted = [...points].sort((a, b) => a.ts - b.ts);
  const out: DailyReturn[] = [];
  let current = null as DailyReturn | null;
  let growth = 1;
  for (let k = 1; k < sorted.length; k++) {
    const prev = sorted[k - 1]!;
    const p = sorted[k]!;
    if (!(prev.valueUsd > 0)) continue;
    const flow = p.capitalInUsd - prev.capitalInUsd - (p.capitalOutUsd - prev.capitalOutUsd);
    const r = (p.valueUsd - flow) / prev.valueUsd - 1;
    const day = utcDay(p.ts);
    if (current?.day !== day) {
      if (current) out.push({ ...current, r: growth - 1 });
      current = { day, r: 0, weightUsd: prev.valueUsd };
      growth = 1;
    }
    growth *= 1 + r;
  }
  if (current) out.push({ ...current, r: growth - 1 });
  return out;
}

/**
 * A strategy's daily returns from its member vaults' daily returns: for each day, the mean of the
 * members' returns weighted by their value at the start of that day (Σ w·r / Σ w); a member without
 * a return that day does not take part. Days in ascending order.
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
