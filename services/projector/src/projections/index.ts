import { createPgPool, type Pool } from '@vault-yield/store';
import {
  type ProjectorConfig,
  projectorConfigSchema,
  type StrategyProjectionInput,
  strategyProjectionConfigSchema,
} from '../config.js';
import { createProjector, type Projector } from '../projector.js';
import { createStrategyProjector, type StrategyProjector } from '../strategy/index.js';

/**
 * Every projection a process runs, wired once: the vault projection (records → snapshot,
 * positions, equity, ledger) and the strategy side (screen results, strategy catalogue → universe,
 * strategies, their figures), each a projection fed by the one exactly-once runner (runner/).
 * Used alike by the projector's main, `vault-yield dev` and the builds of `rebuild`/`verify`.
 */

/** The strategy side of a process's projections (defaults: `strategyProjectionConfigSchema`). */
export type StrategyProjectionConfig = StrategyProjectionInput & {
  /** Its Postgres pool; absent: one of its own (2 connections) on the vault side's URL and schema, ended by stop(). */
  pool?: Pool;
};

export type ProjectionsConfig = ProjectorConfig & {
  /** The strategy side; absent or null: vault records only. */
  strategy?: StrategyProjectionConfig | null;
};

export interface Projections {
  vault: Projector;
  strategy: StrategyProjector | null;
  /** Resolves once every projection runs; rejects with the first that failed to start. */
  started: Promise<void>;
  /** Stops every projection (also while they start) and ends the pool it opened. */
  stop(): Promise<void>;
}

/**
 * Creates the projections of `config` and starts them at once. The handle comes back before they
 * run, so a caller can arrange their stop first (a signal during start stops them too); await
 * `started` for them to run (and handle its rejection).
 */
export function startProjections(config: ProjectionsConfig): Projections {
  const { strategy: strategyInput, ...vaultInput } = config;
  const v = projectorConfigSchema.parse(vaultInput);
  const vault = createProjector(v);
  const m = strategyInput
    ? { ...strategyProjectionConfigSchema.parse(strategyInput), pool: strategyInput.pool }
    : null;
  const ownPool =
    m && !m.pool
      ? createPgPool({
          url: v.databaseUrl,
          schema: v.schema,
          applicationName: 'vault-yield-market',
          max: 2,
        })
      : null;
  const pool = m?.pool ?? ownPool;
  const strategy =
    m && pool
      ? createStrategyProjector({
          brokers: v.kafka.brokers,
          pool,
          logger: m.logger ?? v.logger,
          screenTopic: m.screenTopic,
          catalogueTopic: m.catalogueTopic,
          groupId: m.groupId ?? `${v.kafka.consumerGroup}-market`,
          statsIntervalMs: m.statsIntervalMs,
          minDailyReturns: m.minDailyReturns,
          kafkaGroupSuffix: m.kafkaGroupSuffix,
          sessionTimeoutMs: m.sessionTimeoutMs,
        })
      : null;
  const started = Promise.all([vault.start(), strategy?.start()]).then(() => undefined);
  return {
    vault,
    strategy,
    started,
    async stop() {
      await Promise.all([vault.stop(), strategy?.stop()]);
      await ownPool?.end();
    },
  };
}
