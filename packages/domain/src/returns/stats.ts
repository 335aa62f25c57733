import { aggregateDailyReturns, type DailyReturn, dailyReturns, type EquitySample } from './daily.js';

export const DEFAULT_MIN_DAILY_RETURNS = 30;

export interface RealisedStats {
  /** Simple annualisation of the chained return: R · 365 / n, n = number of daily returns. */
  liveApr: number | null;
  /** Sample standard deviation (n − 1) of the daily returns · √365. */
  sigma: number | null;
  /** Number of daily returns the figures rest on. */
  days: number;
}

/**
 * Realised strategy figures (never projections). R = Π(1 + r_d) − 1 over the n daily returns.
 * Both figures are null while n < minDailyReturns (default 30): the API labels them trailing.
 */
export function realisedStats(
  daily: readonly (DailyReturn | number)[],
  opts: { minDailyReturns?: number } = {},
): RealisedStats {
  const min = opts.minDailyReturns ?? DEFAULT_MIN_DAILY_RETURNS;
  const rs = daily.map((d) => (typeof d === 'number' ? d : d.r));
  const n = rs.length;
  if (n < Math.max(min, 2)) return { liveApr: null, sigma: null, days: n };
  const chained = rs.reduce((g, r) => g * (1 + r), 1) - 1;
  const mean = rs.reduce((a, r) => a + r, 0) / n;
  const variance = rs.reduce((a, r) => a + (r - mean) ** 2, 0) / (n - 1);
  return { liveApr: (chained * 365) / n, sigma: Math.sqrt(variance) * Math.sqrt(365), days: n };
}

/** From each member vault's equity points to the strategy's realised figures. */
export function strategyStats(
  members: readonly (readonly EquitySample[])[],
  opts: { minDailyReturns?: number } = {},
): RealisedStats {
  return realisedStats(aggregateDailyReturns(members.map(dailyReturns)), opts);
}
