import type { Logger } from '@vault-yield/common';
import { strategiesStats } from '@vault-yield/domain';
import {
  type Pool,
  type StrategyStats,
  strategyIds,
  vaultReturnSeries,
  writeStrategyStats,
} from '@vault-yield/store';

/**
 * Recomputes every strategy's realised liveApr and sigma from every vault's equity points
 * (time-weighted from the fold's exact return index, each sub-period for the strategy in force
 * then, elapsed days up to `now` with quiet days as zero returns; see packages/domain returns)
 * and stores them.
 */
export async function refreshStrategyStats(
  pool: Pool,
  minDailyReturns: number,
  log?: Logger,
  now = Date.now(),
): Promise<StrategyStats[]> {
  const figures = strategiesStats((await vaultReturnSeries(pool)).values(), { minDailyReturns, asOf: now });
  const stats: StrategyStats[] = [];
  for (const id of await strategyIds(pool)) {
    const f = figures.get(id) ?? { liveApr: null, sigma: null, days: 0 };
    stats.push({ id, liveApr: f.liveApr, sigma: f.sigma, historyDays: f.days });
  }
  await writeStrategyStats(pool, stats, now);
  log?.debug({ strategies: stats.length }, 'strategy stats refreshed');
  return stats;
}
