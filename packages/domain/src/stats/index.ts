export {
  aggregateDailyReturns,
  type DailyOptions,
  type DailyReturn,
  dailyReturnsByStrategy,
  type EquitySample,
  MIN_RETURN_BASE,
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
