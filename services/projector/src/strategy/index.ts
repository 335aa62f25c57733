import type { Logger } from '@vault-yield/common';
import { type BatchConsumer, createLogAdmin, type LogBatch, type LogSecurity } from '@vault-yield/log';
import { type ApplyOutcome, createStrategyStore, type Pool, type StrategyTx } from '@vault-yield/store';
import { type Applied, createRunnerConsumer } from '../runner/index.js';
import { type DecodedStrategyRecord, decodeStrategyRecord, type StrategyRecordKind } from './decode.js';
import { createStrategyProjection, type StrategyApplied } from './projection.js';
import { refreshStrategyStats } from './stats.js';

export { type DecodedStrategyRecord, decodeStrategyRecord, type StrategyRecordKind } from './decode.js';
export { createStrategyProjection, type StrategyApplied } from './projection.js';
export { refreshStrategyFigures, refreshStrategyStats } from './stats.js';

export interface StrategyProjectorOptions {
  brokers: readonly string[];
  /** SASL/TLS of the brokers (unset: plaintext, a test or dev broker). */
  security?: LogSecurity;
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
export const strategyGroups = (groupId: string) => ({
  screen: `${groupId}-screen`,
  catalogue: `${groupId}-catalogue`,
});

export interface StrategyProjector {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Recomputes strategy figures now. */
  refreshStats(): Promise<void>;
}

/**
 * Projects the strategy topics (screen results, strategy catalogue): the strategy projection fed by
 * the exactly-once runner, one consumer per topic (the runner's consume loop) — newest wins,
 * atomically, with the topic offset stored in the same transaction; bad messages go to dead
 * letters; a batch that does not start at the stored offset is re-read from it. Their records are
 * keyed by topic ('screen', 'catalogue') and carry no sequence number: no gap can be told, and a
 * duplicate is caught by its content (a screen's run id and time, a catalogue's time), not by the
 * runner.
 */
export function createStrategyProjector(options: StrategyProjectorOptions): StrategyProjector {
  const { pool, logger: log } = options;
  const store = createStrategyStore(pool);
  const projection = createStrategyProjection();
  const consumers: BatchConsumer[] = [];
  let timer: NodeJS.Timeout | null = null;

  /** One line per message, in log order, as the strategy side has always logged them. */
  function logBatch(
    kind: StrategyRecordKind,
    batch: LogBatch<DecodedStrategyRecord>,
    run: Applied<StrategyApplied[]>,
  ) {
    const { topic } = batch;
    const letters = new Map(run.letters.map((l) => [l.offset, l]));
    const applied = new Map<string, ApplyOutcome>(run.out?.map((a) => [a.offset, a.outcome]));
    batch.messages.forEach(({ offset }, i) => {
      const letter = letters.get(offset);
      if (letter) log.warn({ topic, offset, reason: letter.reason }, 'market message dead-lettered');
      else {
        const outcome = i < run.skipped ? 'skipped' : applied.get(offset);
        if (outcome) log.info({ topic, offset, kind, outcome }, 'market message projected');
      }
    });
  }

  function consumerFor(kind: StrategyRecordKind, topic: string): BatchConsumer {
    const offsetsGroup = strategyGroups(options.groupId)[kind];
    return createRunnerConsumer<DecodedStrategyRecord, StrategyApplied[], StrategyTx>({
      brokers: options.brokers,
      ...options.security,
      clientId: `vault-yield-strategy-${kind}`,
      logger: log,
      groupId: options.kafkaGroupSuffix ? `${offsetsGroup}.${options.kafkaGroupSuffix}` : offsetsGroup,
      offsetsGroupId: offsetsGroup,
      sessionTimeoutMs: options.sessionTimeoutMs,
      topic,
      decode: (value) => decodeStrategyRecord(kind, value),
      store,
      projection: () => projection,
      onApplied: (batch, run) => logBatch(kind, batch, run),
    });
  }

  async function refreshStats(): Promise<void> {
    await refreshStrategyStats(pool, options.minDailyReturns, log);
  }

  return {
    async start() {
      const admin = await createLogAdmin({
        brokers: options.brokers,
        ...options.security,
        clientId: 'vault-yield-strategy-admin',
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
