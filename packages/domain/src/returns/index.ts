export { aggregateDailyReturns, type DailyReturn, dailyReturns, type EquitySample, utcDay } from './daily.js';
export { DEFAULT_MIN_DAILY_RETURNS, type RealisedStats, realisedStats, strategyStats } from './stats.js';
