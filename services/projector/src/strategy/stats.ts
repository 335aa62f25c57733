import type { Logger } from '@vault-yield/common';
import { type RealisedStats, strategiesStats } from '@vault-yield/domain';
import {
  foldExtent,
  type Pool,
  type StrategyStats,
  strategyIds,
  vaultReturnSeries,
  writeStrategyStats,
} from '@vault-yield/store';

/**
 * Recomputes every strategy's realised liveApr and sigma from every vault's equity points
 * (time-weighted from the fold's exact return index, each sub-period for the strategy in force
 * then, complete UTC days with quiet days as zero returns; see packages/domain returns) and stores
 * them.
 *
 * As of the fold's extent (the block time of the last folded record), never the wall clock: the
 * figures are a function of the log alone, the same whether the projector is in time, behind
 * (backfill, lag, a rebuild of an old log) or the chain clock runs ahead (the local demo advances
 * chain time). With no vault folded there is nothing to be as of: no figures.
 */
export async function refreshStrategyStats(
  pool: Pool,
  minDailyReturns: number,
  log?: Logger,
): Promise<StrategyStats[]> {
  // Before the points: every point folded by asOf is then among those read (a record folded in
  // between only adds points; read after, asOf could pass points that were not read).
  const asOf = await foldExtent(pool);
  const figures =
    asOf === null
      ? new Map<string, RealisedStats>()
      : strategiesStats((await vaultReturnSeries(pool)).values(), { minDailyReturns, asOf });
  const stats: StrategyStats[] = [];
  for (const id of await strategyIds(pool)) {
    const f = figures.get(id) ?? { liveApr: null, sigma: null, days: 0 };
    stats.push({ id, liveApr: f.liveApr, sigma: f.sigma, historyDays: f.days });
  }
  // strategies.updated_at stays the wall clock: it is bookkeeping of when the row was written,
  // never served (the reader serves liveApr and sigma only) and left out of projection checksums.
  await writeStrategyStats(pool, stats);
  log?.debug({ strategies: stats.length, asOf }, 'strategy stats refreshed');
  return stats;
}
