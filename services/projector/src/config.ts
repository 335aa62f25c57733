import { baseConfigSchema, createConfig, type Env, envField, kafkaSecurityShape } from '@vault-yield/common';
import { z } from 'zod';

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

export const projectorConfigSchema = baseConfigSchema.extend({
  KAFKA_BROKERS: envField.brokers(),
  ...kafkaSecurityShape,
  DATABASE_URL: envField.postgresUrl(),
  PROJECTION_SCHEMA: envField.identifier().default('vault_yield'),
  KAFKA_TOPIC: envField.topic().default('vault-records'),
  CONSUMER_GROUP: z.string().min(1).max(200).default('vault-yield-projector'),
  KAFKA_CLIENT_ID: z.string().min(1).default('vault-yield-projector'),
  /**
   * Kafka consumer group used for partition assignment (and lag monitoring), when it must differ
   * from CONSUMER_GROUP, which keys the offsets stored with the projection. Exactly-once never
   * depends on it; a fresh one lets a restarted lone projector skip waiting for a dead member's
   * session to expire (crash tests, one-off rebuilds).
   */
  KAFKA_GROUP_ID: z.string().min(1).max(200).optional(),
  KAFKA_SESSION_TIMEOUT_MS: envField.int(6_000, 300_000).default(30_000),
  /** Partitions this instance folds at once (their Postgres transactions overlap). */
  PROJECTOR_CONCURRENCY: envField.int(1, 64).default(PROJECTOR_BATCH_DEFAULTS.concurrency),
  /** Upper bound of one partition's batch, bytes (kafkajs maxBytesPerPartition). */
  PROJECTOR_MAX_BATCH_BYTES: envField.int(64 * 1024).default(PROJECTOR_BATCH_DEFAULTS.maxBatchBytes),
  PG_POOL_MAX: envField.int(1, 100).default(6),
  /**
   * How often a running projector marks its offsets as written even with nothing to fold (0 =
   * never), so `rebuild retire` never drops a schema an idle projector still runs on: keep it well
   * under retire's quiet period (60 s by default).
   */
  PROJECTOR_HEARTBEAT_MS: envField.int(0, 3_600_000).default(20_000),
  /**
   * Vaults whose fold state is kept in memory between batches (0 = none): their batches skip
   * reading and parsing the snapshot row. Postgres stays the source of truth (see cache.ts).
   */
  PROJECTOR_STATE_CACHE_VAULTS: envField.int(0).default(100_000),
  /**
   * Run the migrations at start (idempotent, serialised by an advisory lock). Off by default:
   * operators migrate with `vault-yield migrate`, so a deploy never changes the schema silently.
   */
  MIGRATE: envField.bool().default(false),
  /** Also project the market topics (screen results, strategy catalogue) and strategy figures. */
  MARKET_PROJECTION: envField.bool().default(true),
  SCREEN_TOPIC: envField.topic().default('screen-results'),
  CATALOGUE_TOPIC: envField.topic().default('strategy-catalogue'),
  /** How often liveApr/sigma are recomputed from the vaults' equity. */
  STATS_INTERVAL_MS: envField.int(0, 86_400_000).default(300_000),
  /** Daily returns a strategy needs before liveApr/sigma are published. */
  MIN_DAILY_RETURNS: envField.int(2, 3650).default(30),
  /** Serve Prometheus metrics on this port (`/metrics`); unset = no HTTP server. */
  METRICS_PORT: envField.port().optional(),
});

export type ProjectorConfig = z.infer<typeof projectorConfigSchema>;

export function loadProjectorConfig(env: Env = process.env): ProjectorConfig {
  return createConfig(projectorConfigSchema, env);
}
