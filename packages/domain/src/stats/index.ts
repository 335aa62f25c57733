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
export {
  DEFAULT_MIN_DAILY_RETURNS,
  type RealisedStats,
  realisedStats,
  strategiesStats,
  strategyStats,
  type VaultSeries,
} from './stats.js';
