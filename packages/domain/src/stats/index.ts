export {
  aggregateDailyReturns,
  type DailyOptions,
  type DailyReturn,
  type DayCarry,
  type DayCell,
  dailyReturnsByStrategy,
  type EquitySample,
  MIN_RETURN_BASE,
  rollDays,
  utcDay,
} from './daily.js';
export { maxDrawdown } from './drawdown.js';
export {
  NO_STRATEGY_LP,
  parseStrategyLp,
  type StrategyLp,
  type StrategyLpFigures,
  strategyLpFigures,
  sumStrategyLp,
  WEEK_MS,
} from './lp.js';
export {
  DEFAULT_MIN_DAILY_RETURNS,
  type RealisedStats,
  realisedStats,
  strategiesStats,
  strategyStats,
  type VaultSeries,
} from './stats.js';
