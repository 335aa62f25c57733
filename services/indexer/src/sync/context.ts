import type { Logger } from '@vault-yield/common';
import type { IndexerStore } from '@vault-yield/store';
import type { ResolvedIndexerConfig } from '../config.js';
import type { IndexerMetrics } from '../metrics.js';
import type { ChainAccess } from './chain.js';
import type { PublishStage } from './publish.js';

/** What every part of one indexer shares (Ponder's `Common`): its config, log, metrics and stop. */
export interface IndexerCommon {
  /** The resolved config: every default filled in. */
  readonly options: ResolvedIndexerConfig;
  readonly log: Logger;
  readonly metrics: IndexerMetrics;
  /** Aborted by stop(): RPC retries and waits end early. */
  readonly signal: AbortSignal;
}

/** The heartbeat (s) of a price feed: past it, its price is stale and its vaults fall due for a mark. */
export const heartbeatOf =
  (o: Pick<ResolvedIndexerConfig, 'heartbeats'>) =>
  (feed: `0x${string}`): number =>
    o.heartbeats.byFeed[feed] ?? o.heartbeats.default;

/** What the stages read and write through, once the engine opened it: the node, Postgres, Kafka. */
export interface IndexerContext extends IndexerCommon {
  readonly chain: ChainAccess;
  readonly store: IndexerStore;
  readonly publisher: PublishStage;
}
