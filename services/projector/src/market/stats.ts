import type { Logger } from '@vault-yield/common';
import { strategyStats } from '@vault-yield/domain';
import {
  type Pool,
  type StrategyStats,
  strategyEquity,
  strategyIds,
  writeStrategyStats,
} from '@vault-yield/store';

/**
 * Recomputes every strategy's realised liveApr and sigma from its vaults' equity points
 * (time-weighted, flows removed; see packages/domain returns) and stores them.
 */
export async function refreshStrategyStats(
  pool: Pool,
  minDailyReturns: number,
  log?: Logger,
): Promise<StrategyStats[]> {
  const stats: StrategyStats[] = [];
  for (const id of await strategyIds(pool)) {
    const members = [...(await strategyEquity(pool, id)).values()];
    const figures = strategyStats(members, { minDailyReturns });
    stats.push({ id, liveApr: figures.liveApr, sigma: figures.sigma, historyDays: figures.days });
  }
  await writeStrategyStats(pool, stats);
  log?.debug({ strategies: stats.length }, 'strategy stats refreshed');
  return stats;
}
