import type { Logger } from '@vault-yield/common';
import { type BatchConsumer, createBatchConsumer, createLogAdmin } from '@vault-yield/log';
import { createMarketStore, type MarketItem, type Pool } from '@vault-yield/store';
import { type DecodedMarket, decodeMarket, type MarketKind } from './decode.js';
import { refreshStrategyStats } from './stats.js';

export { decodeMarket } from './decode.js';
export { refreshStrategyStats } from './stats.js';

export interface MarketProjectorOptions {
  brokers: readonly string[];
  pool: Pool;
  logger: Logger;
  screenTopic: string;
  catalogueTopic: string;
  groupId: string;
  /** How often liveApr/sigma are recomputed; 0 disables the timer. */
  statsIntervalMs: number;
  minDailyReturns: number;
  /**
   * When set, the Kafka group is `<offsets group>.<suffix>` instead of the offsets group itself:
   * a one-off run (a rebuild) then never waits for a killed run's session to expire. Offsets are
   * always keyed by `<groupId>-screen` / `<groupId>-catalogue` in Postgres.
   */
  kafkaGroupSuffix?: string;
  sessionTimeoutMs?: number;
}

/** Where each market topic's offsets are stored (the consumer group key in consumer_offsets). */
export const marketGroups = (groupId: string) => ({
  screen: `${groupId}-screen`,
  catalogue: `${groupId}-catalogue`,
});

export interface MarketProjector {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Recomputes strategy figures now. */
  refreshStats(): Promise<void>;
}

/**
 * Projects the market topics (screen results, strategy catalogue): newest wins, atomically, with
 * the topic offset stored in the same transaction; bad messages go to dead letters.
 */
export function createMarketProjector(options: MarketProjectorOptions): MarketProjector {
  const { pool, logger: log } = options;
  const store = createMarketStore(pool);
  const consumers: BatchConsumer[] = [];
  let timer: NodeJS.Timeout | null = null;

  function consumerFor(kind: MarketKind, topic: string): BatchConsumer {
    const offsetsGroup = marketGroups(options.groupId)[kind];
    return createBatchConsumer<DecodedMarket>({
      brokers: options.brokers,
      clientId: `vault-yield-market-${kind}`,
      logger: log,
      groupId: options.kafkaGroupSuffix ? `${offsetsGroup}.${options.kafkaGroupSuffix}` : offsetsGroup,
      offsetsGroupId: offsetsGroup,
      sessionTimeoutMs: options.sessionTimeoutMs,
      topic,
      decode: (value) => decodeMarket(kind, value),
      storedOffsets: (t, partitions) => store.storedOffsets(offsetsGroup, t, partitions),
      async handleBatch(batch, control) {
        if (!control.isActive()) return undefined;
        const items: MarketItem[] = batch.messages.map((m) =>
          m.decoded.ok
            ? m.decoded.kind === 'screen'
              ? { offset: m.offset, kind: 'screen', value: m.decoded.value }
              : { offset: m.offset, kind: 'catalogue', value: m.decoded.value }
            : {
                offset: m.offset,
                kind: 'dead',
                letter: {
                  topic,
                  partition: m.partition,
                  offset: m.offset,
                  key: m.key,
                  value: m.value,
                  reason: m.decoded.reason,
                  vault: null,
                  kind: 'decode',
                },
              },
        );
        const outcomes = await store.applyBatch(batch.commit, items);
        outcomes.forEach((outcome, i) => {
          const item = items[i]!;
          if (outcome === 'dead' && item.kind === 'dead')
            log.warn(
              { topic, offset: item.offset, reason: item.letter.reason },
              'market message dead-lettered',
            );
          else log.info({ topic, offset: item.offset, kind, outcome }, 'market message projected');
        });
        return { applied: true };
      },
    });
  }

  async function refreshStats(): Promise<void> {
    await refreshStrategyStats(pool, options.minDailyReturns, log);
  }

  return {
    async start() {
      const admin = await createLogAdmin({
        brokers: options.brokers,
        clientId: 'vault-yield-market-admin',
        logger: log,
      });
      try {
        await admin.ensureTopic({ topic: options.screenTopic, partitions: 1 });
        await admin.ensureTopic({ topic: options.catalogueTopic, partitions: 1 });
      } finally {
        await admin.close();
      }
      consumers.push(
        consumerFor('screen', options.screenTopic),
        consumerFor('catalogue', options.catalogueTopic),
      );
      await Promise.all(consumers.map((c) => c.start()));
      if (options.statsIntervalMs > 0) {
        timer = setInterval(() => {
          refreshStats().catch((err: unknown) => log.error({ err }, 'strategy stats refresh failed'));
        }, options.statsIntervalMs);
        timer.unref();
      }
    },
    async stop() {
      if (timer) clearInterval(timer);
      await Promise.all(consumers.map((c) => c.stop()));
    },
    refreshStats,
  };
}
