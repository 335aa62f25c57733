import { randomBytes } from 'node:crypto';
import type { Logger } from '@vault-yield/common';
import type { Pool } from '@vault-yield/store';
import {
  createMarketProjector,
  marketGroups,
  refreshStrategyStats,
} from '../../../projector/src/market/index.js';

export interface MarketFoldOptions {
  brokers: readonly string[];
  /** Pool whose search_path is the build schema. */
  pool: Pool;
  logger: Logger;
  screenTopic: string;
  catalogueTopic: string;
  /** Offsets key: `<groupId>-screen`, `<groupId>-catalogue` (as the market projector names them). */
  groupId: string;
  sessionTimeoutMs: number;
}

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
