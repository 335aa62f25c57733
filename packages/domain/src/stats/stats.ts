import {
  aggregateDailyReturns,
  type DailyOptions,
  type DailyReturn,
  dailyReturnsByStrategy,
  type EquitySample,
} from './daily.js';

export const DEFAULT_MIN_DAILY_RETURNS = 30;

export interface RealisedStats {
  /** Simple annualisation of the chained return: R · 365 / n, n = elapsed (operating) days. */
  liveApr: number | null;
  /** Sample standard deviation (n − 1) of the daily returns, quiet days' zeros included, · √365. */
  sigma: number | null;
  /** Number of daily returns (elapsed operating days) the figures rest on. */
  days: number;
}

/**
 * Realised strategy figures (never projections). R = Π(1 + r_d) − 1 over the n daily returns,
 * one per elapsed day complete by asOf (a quiet day is a zero return, see daily.ts). Both figures
 * are null while n < minDailyReturns (default 30): the API labels them trailing.
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

/**
 * A vault's equity points and how far THAT vault has been folded (`asOf`, Unix ms block time):
 * its daily returns stop there. A vault folded less far than others (its partition behind in a
 * catch-up or a rebuild, or the vault held at a gap) has no return on the days after it — those
 * days do not exist for it yet, they are not quiet days.
 */
export interface VaultSeries {
  readonly points: readonly EquitySample[];
  readonly asOf?: number;
}

/**
 * Every strategy's realised figures from every vault's equity points (each sub-period counts for
 * the strategy in force then, so a vault that switches keeps its history where it was earned).
 * Each vault's series counts up to its own `asOf` when it has one (VaultSeries), else `opts.asOf`.
 */
export function strategiesStats(
  vaults: Iterable<readonly EquitySample[] | VaultSeries>,
  opts: DailyOptions & { minDailyReturns?: number } = {},
): Map<string, RealisedStats> {
  const members = new Map<string, DailyReturn[][]>();
  for (const v of vaults) {
    const { points, asOf } = 'points' in v ? v : { points: v, asOf: undefined };
    const own = asOf === undefined ? opts : { ...opts, asOf };
    for (const [strategy, series] of dailyReturnsByStrategy(points, own)) {
      let list = members.get(strategy);
      if (!list) {
        list = [];
        members.set(strategy, list);
      }
      list.push(series);
    }
  }
  const out = new Map<string, RealisedStats>();
  for (const [strategy, series] of members)
    out.set(strategy, realisedStats(aggregateDailyReturns(series), opts));
  return out;
}

/** One strategy's figures from its member vaults' equity points (all points count for it). */
export function strategyStats(
  members: readonly (readonly EquitySample[] | VaultSeries)[],
  opts: DailyOptions & { minDailyReturns?: number } = {},
): RealisedStats {
  const all = strategiesStats(members, opts);
  const [first] = all.values();
  if (all.size > 1) throw new Error('strategyStats: members ran several strategies; use strategiesStats');
  return first ?? { liveApr: null, sigma: null, days: 0 };
}
