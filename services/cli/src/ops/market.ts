import { randomBytes } from 'node:crypto';
import {
  createMarketProjector,
  type MarketProjectorOptions,
  marketGroups,
  refreshStrategyStats,
} from '../../../projector/src/market/index.js';

/** The market projector's options less the stats timer (a build refreshes figures itself). */
export type MarketFoldOptions = Omit<
  MarketProjectorOptions,
  'statsIntervalMs' | 'minDailyReturns' | 'kafkaGroupSuffix'
> & { sessionTimeoutMs: number };

/**
 * Folds the market topics (screen results, strategy catalogue) into a build schema with the
 * market projector itself (newest wins, offsets in the same transaction), under a Kafka group of
 * its own per run so a resumed build never waits for a killed run's session to expire. Strategy
 * figures are refreshed by the build once the fold is done, not on a timer.
 */
export function createMarketFold(o: MarketFoldOptions): { start(): Promise<void>; stop(): Promise<void> } {
  return createMarketProjector({
    ...o,
    statsIntervalMs: 0,
    minDailyReturns: 30,
    kafkaGroupSuffix: randomBytes(3).toString('hex'),
  });
}

export { marketGroups, refreshStrategyStats };
