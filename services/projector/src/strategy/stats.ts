import type { Logger } from '@vault-yield/common';
import { type RealisedStats, realisedStats, strategyLpFigures } from '@vault-yield/domain';
import {
  type DailyRollup,
  type Pool,
  rollStrategyDays,
  type StrategyFigures,
  type StrategyStats,
  strategyIds,
  vaultFoldExtents,
  vaultStrategyLp,
  writeStrategyStats,
} from '@vault-yield/store';

/**
 * Recomputes every strategy's realised liveApr and sigma from every vault's equity points, read
 * through the daily rollups (store `rollStrategyDays`: the same figures, each point read once)
 * (time-weighted from the fold's exact return index, each sub-period for the strategy in force
 * then, complete UTC days with quiet days as zero returns; see packages/domain returns) and stores
 * them.
 *
 * Each vault's series counts up to how far THAT vault has been folded (its partition's extent, or
 * its own last record while it is held at a gap: store `vaultFoldExtents`), never the wall clock
 * nor the projection's latest record: the figures are a function of the log alone, the same
 * whether the projector is in time, behind (backfill, lag, a rebuild with uneven partitions) or
 * the chain clock runs ahead (the local demo advances chain time) — a vault folded less far than
 * others has no days after its extent, not quiet ones. With no vault folded: no figures.
 */
export async function refreshStrategyStats(
  pool: Pool,
  minDailyReturns: number,
  log?: Logger,
): Promise<StrategyStats[]> {
  return (await refreshStrategyFigures(pool, minDailyReturns, log)).map(({ lp: _lp, ...s }) => s);
}

/**
 * `refreshStrategyStats`, returning each strategy's LP figures too (issue #46 item 8), written in
 * the same statement: the sums of its member vaults' LP figures earned under it (each vault's
 * stored `lp.byStrategy`, read from the vault rows: store `vaultStrategyLp`) over time-weighted
 * capital and time, and the drawdown of the daily returns behind liveApr — every one null while
 * liveApr is null (domain `strategyLpFigures`).
 */
export async function refreshStrategyFigures(
  pool: Pool,
  minDailyReturns: number,
  log?: Logger,
): Promise<StrategyFigures[]> {
  // Before the points: every point folded by a vault's extent is then among those read (a record
  // folded in between only adds points; read after, an extent could pass points not read).
  const extents = await vaultFoldExtents(pool);
  const figures = new Map<string, RealisedStats>();
  let rollup: DailyRollup | null = null;
  if (extents.size > 0) {
    // From the daily rollups: each point is read once, when its day completes (#49).
    rollup = await rollStrategyDays(pool, extents);
    for (const [strategy, daily] of rollup.strategies)
      figures.set(strategy, realisedStats(daily, { minDailyReturns }));
  }
  // Only where a strategy has figures (the vault rows are read once, whatever their number).
  const members = figures.size > 0 ? await vaultStrategyLp(pool) : new Map();
  const stats: StrategyFigures[] = [];
  for (const id of await strategyIds(pool)) {
    const f = figures.get(id) ?? { liveApr: null, sigma: null, days: 0 };
    const lp = strategyLpFigures(members.get(id) ?? [], rollup?.strategies.get(id) ?? [], {
      minDailyReturns,
    });
    stats.push({ id, liveApr: f.liveApr, sigma: f.sigma, historyDays: f.days, lp });
  }
  // strategies.updated_at stays the wall clock: it is bookkeeping of when the row was written,
  // never served (the reader serves liveApr and sigma only) and left out of projection checksums.
  await writeStrategyStats(pool, stats);
  log?.debug(
    {
      strategies: stats.length,
      vaults: extents.size,
      rolled: rollup?.vaults ?? 0,
      points: rollup?.points ?? 0,
      days: rollup?.days ?? 0,
      redone: rollup?.redone ?? 0,
    },
    'strategy stats refreshed',
  );
  return stats;
}
