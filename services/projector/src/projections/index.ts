import { CONFIG_DEFAULTS, type Context, securityOf } from '@vault-yield/common';
import {
  createPgPool,
  getBuild,
  type LiveSwitchWatch,
  liveRecord,
  type Pool,
  schemaExists,
  watchLiveSwitch,
} from '@vault-yield/store';
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
export function startProjections(config: ProjectionsConfig, ctx?: Context): Projections {
  const { strategy: strategyInput, ...vaultInput } = config;
  const v = projectorConfigSchema.parse(vaultInput);
  const vault = createProjector(v, ctx);
  const m = strategyInput
    ? { ...strategyProjectionConfigSchema.parse(strategyInput), pool: strategyInput.pool }
    : null;
  const ownPool =
    m && !m.pool
      ? createPgPool({
          url: v.databaseUrl,
          schema: v.schema,
          applicationName: 'vault-yield-strategy',
          max: 2,
          pooling: v.pooling,
        })
      : null;
  const pool = m?.pool ?? ownPool;
  const strategy =
    m && pool
      ? createStrategyProjector({
          brokers: v.kafka.brokers,
          // Both sides connect as the config or the process's context says.
          security: v.kafka.security ?? securityOf(ctx?.kafka),
          pool,
          logger: m.logger ?? ctx?.log ?? v.logger,
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

/** How a process follows the live projection schema of a views schema (`FOLLOW_LIVE`). */
export interface FollowOptions {
  /** The views schema whose live schema (`vy_live`) the projections fold into. */
  viewsSchema: string;
  /** How often `vy_live` is read besides the switch's notification (LISTEN `vault_yield_live`). */
  intervalMs: number;
}

export interface FollowingProjections {
  /** The projections running now (replaced at each switch). */
  current(): Projections;
  /** The schema they fold into now. */
  schema(): string;
  /** Resolves once the first projections run. */
  started: Promise<void>;
  /** Stops following and the projections. */
  stop(): Promise<void>;
}

/** Where the projections fold: the schema, the group its offsets are stored under, the topics read. */
interface FollowTarget {
  schema: string;
  group: string;
  topic: string;
  /** The strategy topics the build folded (null: the configured ones). */
  market: { screenTopic: string; catalogueTopic: string } | null;
}

/**
 * Runs `config`'s projections on the live schema of `follow.viewsSchema` and moves them when
 * `rebuild` switches the views: the running ones finish their batches and stop (their last
 * transactions commit into the old schema), and new ones start on the new schema from the offsets
 * stored there — under the group that stored them (the build's, `vy_builds.group_id`) and from the
 * topics the build folded (`vy_builds.topic`, `market`: a reindex's new topic, not the configured
 * one), so every record after the build's last one is folded once: exactly-once holds across the
 * move, and the schema stores the offsets of its build's topics only. The switch is learnt from
 * its notification, and from `vy_live` every `intervalMs` should one be missed. Before any switch
 * (no `vy_live`, or a live schema that no longer exists) `config.schema` is used.
 */
export function followLiveProjections(
  config: ProjectionsConfig,
  follow: FollowOptions,
  ctx?: Context,
): FollowingProjections {
  const log = (ctx?.log ?? config.logger).child({ component: 'follow-live' });
  const pool = createPgPool({ url: config.databaseUrl, applicationName: 'vault-yield-follow', max: 1 });
  const fallback = config.schema ?? CONFIG_DEFAULTS.projectionSchema;
  const baseGroup = config.kafka.consumerGroup ?? CONFIG_DEFAULTS.projectorGroup;
  const kafkaGroup = config.kafka.groupId ?? baseGroup;
  let schema = fallback;
  let running: Projections | null = null;
  let stopped = false;
  let chain: Promise<void> = Promise.resolve();
  let watch: LiveSwitchWatch | null = null;

  const configured = { topic: config.kafka.topic ?? CONFIG_DEFAULTS.recordsTopic, market: null };

  /** The live schema to fold into, the consumer group its offsets are stored under, its topics. */
  const target = async (): Promise<FollowTarget> => {
    const live = await liveRecord(pool, follow.viewsSchema);
    if (!live || !(await schemaExists(pool, live.schema)))
      return { schema: fallback, group: baseGroup, ...configured };
    const build = await getBuild(pool, follow.viewsSchema, live.schema);
    // A built schema's offsets are its build's group's, of its build's topics; the initial one's
    // (switched to, never built), the configured group's and topics'.
    if (!build || build.purpose === 'initial' || !build.groupId)
      return { schema: live.schema, group: baseGroup, ...configured };
    return {
      schema: live.schema,
      group: build.groupId,
      topic: build.topic || configured.topic,
      market: build.market,
    };
  };

  const launch = (t: FollowTarget, first: boolean): Projections => {
    const strategy = config.strategy
      ? {
          ...config.strategy,
          ...(t.market ?? {}),
          groupId: t.group === baseGroup ? config.strategy.groupId : t.group,
        }
      : config.strategy;
    return startProjections(
      {
        ...config,
        schema: t.schema,
        migrate: first ? config.migrate : false,
        kafka: { ...config.kafka, topic: t.topic, consumerGroup: t.group, groupId: kafkaGroup },
        strategy,
      },
      ctx,
    );
  };

  /** Moves to the live schema if it changed (serialised: one look at a time). */
  const check = (): Promise<void> => {
    chain = chain.then(async () => {
      if (stopped || !running) return;
      let t: FollowTarget;
      try {
        t = await target();
      } catch (err) {
        log.warn({ err }, 'cannot read the live schema; staying on the current one');
        return;
      }
      if (t.schema === schema || stopped) return;
      log.info(
        { from: schema, to: t.schema, group: t.group, topic: t.topic },
        'live schema switched: moving the projections',
      );
      const old = running;
      running = null;
      await old.stop();
      schema = t.schema;
      for (let attempt = 1; !stopped; attempt++) {
        const next = launch(t, false);
        try {
          await next.started;
          running = next;
          log.info({ schema, group: t.group, topic: t.topic }, 'projections follow the live schema');
          return;
        } catch (err) {
          await next.stop().catch(() => {});
          log.error({ err, schema, attempt }, 'projections failed to start on the live schema; retrying');
          await new Promise((r) => setTimeout(r, Math.min(30_000, follow.intervalMs * attempt)));
        }
      }
    });
    return chain;
  };

  const started = (async () => {
    const t = await target();
    schema = t.schema;
    const first = launch(t, true);
    running = first;
    await first.started;
    log.info(
      { viewsSchema: follow.viewsSchema, schema, group: t.group, topic: t.topic },
      'following the live schema',
    );
    if (stopped) return;
    // LISTEN holds a session: through a transaction-mode pooler the interval alone tells.
    watch = watchLiveSwitch({
      url: config.databaseUrl,
      viewsSchema: follow.viewsSchema,
      intervalMs: follow.intervalMs,
      listen: config.pooling !== 'transaction',
      check: () => void check(),
      onListenError: (err, retryInMs) =>
        log.warn({ err, retryInMs }, 'live-switch listener lost; polling meanwhile'),
    });
  })();

  return {
    current: () => {
      if (!running) throw new Error('the projections are moving to the new live schema');
      return running;
    },
    schema: () => schema,
    started,
    async stop() {
      if (stopped) return;
      stopped = true;
      await watch?.stop();
      await started.catch(() => {});
      await chain;
      await running?.stop();
      running = null;
      await pool.end();
    },
  };
}
