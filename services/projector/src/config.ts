import {
  baseConfigSchema,
  CONFIG_DEFAULTS,
  createConfig,
  doc,
  type Env,
  envField,
  configInt as int,
  kafkaEnv,
  kafkaSecurity,
  type Logger,
  MIN_DAILY_RETURNS_RANGE,
  sharedEnv,
} from '@vault-yield/common';
import type { LogSecurity } from '@vault-yield/log';
import { z } from 'zod';
import type { BatchStats } from './apply.js';

/**
 * Batch shape defaults. Two partitions at once, each batch several thousand records: a vault's
 * snapshot (state ≈ 3 KB + view) and its bundle are written once per batch, so larger batches
 * spread them over more records, and two transactions keep Postgres as busy as four. Bounded in
 * bytes (kafkajs fetches by bytes): 8 MiB holds ≈ 14,000 binary records (≈ 600 B each). What a
 * batch keeps decoded is only each record's head (the rest is decoded as it is folded), so the size
 * is bounded by Postgres' work per vault, not by the heap. Measured (bench:projector, 1,000,000
 * records / 1,000 vaults, 2 shared cores), two instances: 8 MiB 23,508 records/s (projector
 * 60.6 µs, Postgres 15.2 µs a record, RSS 371 MiB an instance) vs 4 MiB 20,676 (68.0, 19.5, 280);
 * one instance: RSS 398 MiB, Postgres 16.4 vs 18.9 µs. Before lazy decode 12 MiB thrashed the
 * 256 MiB old space (6,566 records/s, RSS 508 MiB). A log still in JSON (≈ 2.2 KB a record, decoded
 * whole) gets batches of ≈ 3,800 records.
 */
export const PROJECTOR_BATCH_DEFAULTS = { concurrency: 2, maxBatchBytes: 8 * 1024 * 1024 } as const;

/**
 * Environment of the projector process: formats only. Defaults live in one place,
 * `projectorConfigSchema`, which `projectorConfigFromEnv`'s result goes through like any config
 * (the env schema repeats them so that `loadProjectorEnv` shows what the process will run with).
 */
export const projectorEnvSchema = baseConfigSchema.extend({
  ...kafkaEnv,
  DATABASE_URL: sharedEnv.DATABASE_URL,
  DATABASE_POOLING: sharedEnv.DATABASE_POOLING,
  PROJECTION_SCHEMA: sharedEnv.PROJECTION_SCHEMA,
  KAFKA_TOPIC: sharedEnv.KAFKA_TOPIC,
  CONSUMER_GROUP: sharedEnv.CONSUMER_GROUP,
  KAFKA_CLIENT_ID: doc(
    z.string().min(1).default(CONFIG_DEFAULTS.projectorGroup),
    "the projector's Kafka client id",
  ),
  KAFKA_GROUP_ID: doc(
    z.string().min(1).max(200).optional(),
    "Kafka consumer group used for partition assignment, when it must differ from `CONSUMER_GROUP` (which keys the offsets stored with the projection; exactly-once never depends on it): a fresh one lets a restarted lone projector skip waiting for a dead member's session to expire",
    '`CONSUMER_GROUP`',
  ),
  KAFKA_SESSION_TIMEOUT_MS: doc(
    envField.int(6_000, 300_000).default(30_000),
    'Kafka consumer session timeout',
  ),
  PROJECTOR_CONCURRENCY: doc(
    envField.int(1, 64).default(PROJECTOR_BATCH_DEFAULTS.concurrency),
    'partitions one instance folds at once (their Postgres transactions overlap)',
  ),
  PROJECTOR_MAX_BATCH_BYTES: doc(
    envField.int(64 * 1024).default(PROJECTOR_BATCH_DEFAULTS.maxBatchBytes),
    "upper bound of one partition's batch, bytes (kafkajs `maxBytesPerPartition`)",
  ),
  PG_POOL_MAX: doc(
    envField.int(1, 100).default(6),
    "Postgres connections at most (a projector's, or a build's)",
  ),
  PROJECTOR_HEARTBEAT_MS: doc(
    envField.int(0, 3_600_000).default(20_000),
    'how often a running projector marks its offsets as written even when idle, so `rebuild retire` (quiet period 60 s) never drops a schema it still runs on; `0` = never',
  ),
  PROJECTOR_STATE_CACHE_VAULTS: doc(
    envField.int(0).default(100_000),
    'vaults whose fold state is kept in memory between batches (0 = none); Postgres stays the source of truth',
  ),
  MIGRATE: doc(
    envField.bool().default(false),
    'run the migrations at start (idempotent); off: operators migrate with `vault-yield migrate`',
  ),
  MARKET_PROJECTION: doc(
    envField.bool().default(true),
    'also project the strategy topics (screen results, strategy catalogue) and strategy figures',
  ),
  SCREEN_TOPIC: sharedEnv.SCREEN_TOPIC,
  CATALOGUE_TOPIC: sharedEnv.CATALOGUE_TOPIC,
  STATS_INTERVAL_MS: doc(
    envField.int(0, 86_400_000).default(300_000),
    "how often strategies' `liveApr`/`sigma` are recomputed from the vaults' equity",
  ),
  MIN_DAILY_RETURNS: sharedEnv.MIN_DAILY_RETURNS,
  METRICS_PORT: sharedEnv.METRICS_PORT.optional(),
  METRICS_HOST: sharedEnv.METRICS_HOST,
  FOLLOW_LIVE: doc(
    envField.bool().default(false),
    "fold into the live schema of `VIEWS_SCHEMA` (its `vy_live`) instead of `PROJECTION_SCHEMA` (then only the schema before any switch), and move by itself when `rebuild` switches the views: the batch in flight commits, then folding resumes in the new schema from the offsets stored there by the build (under the build's consumer group). Off: the projector stays on `PROJECTION_SCHEMA` (pinned)",
  ),
  VIEWS_SCHEMA: sharedEnv.VIEWS_SCHEMA,
  FOLLOW_LIVE_INTERVAL_MS: doc(
    envField.int(100, 3_600_000).default(5_000),
    "with `FOLLOW_LIVE`: how often the live schema is read besides the switch's notification (Postgres `LISTEN vault_yield_live`, sent by `rebuild`'s switch)",
  ),
});

export type ProjectorEnv = z.output<typeof projectorEnvSchema>;

export function loadProjectorEnv(env: Env = process.env): ProjectorEnv {
  return createConfig(projectorEnvSchema, env);
}

/**
 * The vault projector's one config shape (camelCase), with every default. `createProjector`
 * parses what it is given with it; the environment reaches it through `projectorConfigFromEnv`.
 */
export const projectorConfigSchema = z.object({
  databaseUrl: z.string().min(1),
  /**
   * How `databaseUrl` is pooled: `transaction` (PgBouncer transaction mode) sets nothing per
   * connection; the role's search_path must name `schema` (checked at start).
   */
  pooling: z.enum(['session', 'transaction']).default('session'),
  /** Postgres schema of the projection tables. */
  schema: z.string().min(1).default(CONFIG_DEFAULTS.projectionSchema),
  kafka: z.object({
    brokers: z.array(z.string().min(1)).min(1).readonly(),
    topic: z.string().min(1).default(CONFIG_DEFAULTS.recordsTopic),
    /** Keys the offsets stored with the projection. */
    consumerGroup: z.string().min(1).max(200).default(CONFIG_DEFAULTS.projectorGroup),
    /**
     * Kafka consumer group used for partition assignment (and lag monitoring), when it must differ
     * from `consumerGroup`. Exactly-once never depends on it; a fresh one lets a restarted lone
     * projector skip waiting for a dead member's session to expire (crash tests, one-off rebuilds).
     */
    groupId: z.string().min(1).max(200).optional(),
    clientId: z.string().min(1).default(CONFIG_DEFAULTS.projectorGroup),
    sessionTimeoutMs: int(6_000, 300_000).default(30_000),
    /** SASL/TLS of its Kafka clients; unset: the process context's (plaintext without one). */
    security: z.custom<LogSecurity>().optional(),
  }),
  /** Partitions this instance folds at once (their Postgres transactions overlap). */
  concurrency: int(1, 64).default(PROJECTOR_BATCH_DEFAULTS.concurrency),
  /** Upper bound of one partition's batch, bytes (kafkajs maxBytesPerPartition). */
  maxBatchBytes: int(64 * 1024).default(PROJECTOR_BATCH_DEFAULTS.maxBatchBytes),
  pgPoolMax: int(1, 100).default(6),
  /**
   * Postgres `synchronous_commit` of the fold's transactions. `on` (default): a committed batch
   * survives a server crash — the reader serves it, streams and callbacks announce it at commit, so
   * a crash must never take it back. `off` only where nothing serves the schema yet (a rebuild's
   * build: a lost commit is folded again from Kafka, and the switch's own commit flushes the WAL
   * before anything reads it).
   */
  synchronousCommit: z.enum(['on', 'off']).default('on'),
  /**
   * How often a running projector marks its offsets as written even with nothing to fold (0 =
   * never), so `rebuild retire` never drops a schema an idle projector still runs on: keep it well
   * under retire's quiet period (60 s by default).
   */
  heartbeatMs: int(0, 3_600_000).default(20_000),
  /**
   * Vaults whose fold state is kept in memory between batches (0 = none): their batches skip
   * reading and parsing the snapshot row. Postgres stays the source of truth (see cache.ts).
   */
  stateCacheVaults: int().default(100_000),
  /**
   * Run the migrations at start (idempotent, serialised by an advisory lock). Off by default:
   * operators migrate with `vault-yield migrate`, so a deploy never changes the schema silently.
   */
  migrate: z.boolean().default(false),
  /** Serve Prometheus metrics on this port (`/metrics`); unset = no HTTP server. */
  metricsPort: int(0, 65_535).optional(),
  /** Where the metrics server listens: loopback unless told (a scraper on the host or a sidecar). */
  metricsHost: z.string().min(1).default('127.0.0.1'),
  logger: z.custom<Logger>((v) => typeof v === 'object' && v !== null),
  /** Called after each committed batch (tests, bench). */
  onBatch: z
    .custom<(partition: number, stats: BatchStats) => void>((v) => typeof v === 'function')
    .optional(),
});

/** What `createProjector` takes: defaults may be left out. */
export type ProjectorConfig = z.input<typeof projectorConfigSchema>;
/** The config with every default filled in. */
export type ResolvedProjectorConfig = z.output<typeof projectorConfigSchema>;

/** The strategy side of a process's projections (`startProjections`), with its defaults. */
export const strategyProjectionConfigSchema = z.object({
  screenTopic: z.string().min(1).default(CONFIG_DEFAULTS.screenTopic),
  catalogueTopic: z.string().min(1).default(CONFIG_DEFAULTS.catalogueTopic),
  /**
   * Its offsets are stored under `<groupId>-screen` and `<groupId>-catalogue` (see strategyGroups);
   * default: `<the vault side's consumerGroup>-market`.
   */
  groupId: z.string().min(1).optional(),
  /** How often liveApr/sigma are recomputed; 0: never on a timer (a build refreshes them itself). */
  statsIntervalMs: int(0, 86_400_000).default(300_000),
  minDailyReturns: int(MIN_DAILY_RETURNS_RANGE.min, MIN_DAILY_RETURNS_RANGE.max).default(
    CONFIG_DEFAULTS.minDailyReturns,
  ),
  /** Default: the vault side's logger. */
  logger: z.custom<Logger>((v) => typeof v === 'object' && v !== null).optional(),
  /** A Kafka group per run (see StrategyProjectorOptions.kafkaGroupSuffix). */
  kafkaGroupSuffix: z.string().optional(),
  sessionTimeoutMs: int(6_000, 300_000).optional(),
});

export type StrategyProjectionInput = z.input<typeof strategyProjectionConfigSchema>;

/** The projector's config from its validated environment (main.ts). */
export function projectorConfigFromEnv(
  env: ProjectorEnv,
  logger: Logger,
): ProjectorConfig & {
  strategy: StrategyProjectionInput | null;
  /** FOLLOW_LIVE: the live schema of `viewsSchema` to fold into, read every `intervalMs`; null: pinned. */
  follow: { viewsSchema: string; intervalMs: number } | null;
} {
  return {
    databaseUrl: env.DATABASE_URL,
    pooling: env.DATABASE_POOLING,
    schema: env.PROJECTION_SCHEMA,
    kafka: {
      brokers: env.KAFKA_BROKERS,
      topic: env.KAFKA_TOPIC,
      consumerGroup: env.CONSUMER_GROUP,
      groupId: env.KAFKA_GROUP_ID,
      clientId: env.KAFKA_CLIENT_ID,
      sessionTimeoutMs: env.KAFKA_SESSION_TIMEOUT_MS,
      security: kafkaSecurity(env),
    },
    concurrency: env.PROJECTOR_CONCURRENCY,
    maxBatchBytes: env.PROJECTOR_MAX_BATCH_BYTES,
    pgPoolMax: env.PG_POOL_MAX,
    heartbeatMs: env.PROJECTOR_HEARTBEAT_MS,
    stateCacheVaults: env.PROJECTOR_STATE_CACHE_VAULTS,
    migrate: env.MIGRATE,
    metricsPort: env.METRICS_PORT,
    metricsHost: env.METRICS_HOST,
    logger,
    strategy: env.MARKET_PROJECTION
      ? {
          screenTopic: env.SCREEN_TOPIC,
          catalogueTopic: env.CATALOGUE_TOPIC,
          groupId: `${env.CONSUMER_GROUP}-market`,
          statsIntervalMs: env.STATS_INTERVAL_MS,
          minDailyReturns: env.MIN_DAILY_RETURNS,
          logger: logger.child({ component: 'market' }),
        }
      : null,
    follow: env.FOLLOW_LIVE
      ? { viewsSchema: env.VIEWS_SCHEMA, intervalMs: env.FOLLOW_LIVE_INTERVAL_MS }
      : null,
  };
}
