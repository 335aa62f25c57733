import type { DailyReturn } from './daily.js';

/**
 * The maximum drawdown of a chained daily return series: the index I_0 = 1, I_k = I_{k−1} · (1 +
 * r_k) over the daily returns in order, and the largest (peak − I_k) / peak over k, peak the
 * highest index up to k (I_0 included: a fall from the first day's start counts). 0 for an empty
 * or never-falling series; 1 once a day returns −100 % (never more: a return below −100 % is
no value, read as −100 %). The series is the one liveApr and sigma
 * rest on (`realisedStats`), so the three describe the same days.
 */
export function maxDrawdown(daily: readonly (DailyReturn | number)[]): number {
  let index = 1;
  let peak = 1;
  let max = 0;
  for (const d of daily) {
    index *= Math.max(0, 1 + (typeof d === 'number' ? d : d.r));
    if (index > peak) peak = index;
    else {
      const fall = (peak - index) / peak;
      if (fall > max) max = fall;
    }
  }
  return max;
}
