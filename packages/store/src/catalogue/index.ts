export { createMarketStore, type MarketStore, type MarketTx } from './market.js';
export { type ApplyOutcome, applyScreen } from './screen.js';
export {
  type EquitySample,
  foldExtent,
  type StrategyStats,
  strategyIds,
  vaultReturnSeries,
  writeStrategyStats,
} from './stats.js';
export { applyCatalogue } from './strategies.js';
