export { type DailyRollup, rollStrategyDays } from './days.js';
export { createStrategyStore, type StrategyStore, type StrategyTx } from './projection.js';
export { type ApplyOutcome, applyScreen } from './screen.js';
export {
  type EquitySample,
  foldExtent,
  type StrategyFigures,
  type StrategyStats,
  strategyIds,
  vaultFoldExtents,
  vaultReturnSeries,
  vaultStrategyLp,
  writeStrategyStats,
} from './stats.js';
export { applyCatalogue } from './strategies.js';
