import { randomBytes } from 'node:crypto';
import type { Logger } from '@vault-yield/common';
import { type BatchConsumer, createBatchConsumer } from '@vault-yield/log';
import { createMarketStore, type MarketItem, type Pool } from '@vault-yield/store';
// The projector's market decoding and strategy figures, reused rather than copied (the projector
// package exports only its vault projector so far).
import { decodeMarket, refreshStrategyStats } from '../../../projector/src/market/index.js';

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

export const marketGroups = (groupId: string) => ({
  screen: `${groupId}-screen`,
  catalogue: `${groupId}-catalogue`,
});

/**
 * Folds the market topics (screen results, strategy catalogue) into a build schema the way the
 * market projector does (newest wins, offsets in the same transaction), with a Kafka group of its
 * own per run so a resumed build never waits for a killed run's session to expire.
 */
export function createMarketFold(o: MarketFoldOptions): { start(): Promise<void>; stop(): Promise<void> } {
  const store = createMarketStore(o.pool);
  const run = randomBytes(3).toString('hex');
  const groups = marketGroups(o.groupId);
  const consumers: BatchConsumer[] = (['screen', 'catalogue'] as const).map((kind) => {
    const topic = kind === 'screen' ? o.screenTopic : o.catalogueTopic;
    const offsetsGroup = groups[kind];
    return createBatchConsumer({
      brokers: o.brokers,
      clientId: `vault-yield-build-market-${kind}`,
      logger: o.logger,
      groupId: `${offsetsGroup}.${run}`,
      offsetsGroupId: offsetsGroup,
      topic,
      sessionTimeoutMs: o.sessionTimeoutMs,
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
                },
              },
        );
        await store.applyBatch(batch.commit, items);
        return { applied: true };
      },
    });
  });
  return {
    start: async () => {
      await Promise.all(consumers.map((c) => c.start()));
    },
    stop: async () => {
      await Promise.all(consumers.map((c) => c.stop()));
    },
  };
}

export { refreshStrategyStats };
