export { createMarketStore, type MarketItem, type MarketStore } from './market.js';
export { type ApplyOutcome, applyScreen } from './screen.js';
export {
  type EquitySample,
  type StrategyStats,
  strategyEquity,
  strategyIds,
  writeStrategyStats,
} from './stats.js';
export { applyCatalogue } from './strategies.js';
