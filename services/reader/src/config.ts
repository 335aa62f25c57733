import { baseConfigSchema, createConfig, type Env, envField, type Logger } from '@vault-yield/common';
import { z } from 'zod';

export interface ReaderConfig {
  /** Read-only role URL. */
  databaseUrl: string;
  /** Projection schema (search_path). */
  schema: string;
  port: number;
  host: string;
  /** Per-client token bucket; ratePerSecond 0 disables it. */
  rateLimit: { ratePerSecond: number; burst: number; trustProxy: boolean };
  /** Allowed CORS origins; '*' = any (public read API). */
  corsOrigins: '*' | string[];
  /** Cache-Control max-age of vault resources (snapshot, equity, events, tx, vaults), seconds. */
  cacheMaxAgeS: number;
  /** Cache-Control max-age of the catalogue and universe, seconds. */
  catalogueMaxAgeS: number;
  poolMax: number;
  statementTimeoutMs: number;
  /** How long a connection attempt to Postgres may take before the request gets a 503. */
  connectTimeoutMs: number;
  /** Longest wait for in-flight requests on stop before connections are cut. */
  shutdownGraceMs: number;
  /** Registers GET /bench/hello (plain hello world, for the bench's baseline). */
  benchRoutes: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Optional logger to use instead of a new one (tests). */
  logger?: Logger;
}

export const readerEnvSchema = baseConfigSchema.extend({
  DATABASE_URL: envField.postgresUrl(),
  PROJECTION_SCHEMA: envField.identifier().default('vault_yield'),
  PORT: envField.port().default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  RATE_LIMIT_RPS: z.coerce.number().min(0).max(1_000_000).default(20),
  RATE_LIMIT_BURST: envField.int(1, 1_000_000).default(40),
  TRUST_PROXY: envField.bool().default(false),
  CORS_ORIGINS: z
    .string()
    .default('*')
    .transform((s) =>
      s.trim() === '*'
        ? ('*' as const)
        : s
            .split(',')
            .map((o) => o.trim())
            .filter(Boolean),
    ),
  CACHE_MAX_AGE_S: envField.int(0, 86_400).default(2),
  CATALOGUE_MAX_AGE_S: envField.int(0, 86_400).default(30),
  PG_POOL_MAX: envField.int(1, 200).default(10),
  STATEMENT_TIMEOUT_MS: envField.int(100, 600_000).default(5000),
  PG_CONNECT_TIMEOUT_MS: envField.int(100, 600_000).default(3000),
  SHUTDOWN_GRACE_MS: envField.int(0, 600_000).default(10_000),
  BENCH_ROUTES: envField.bool().default(false),
});

/** Reads the reader's settings from the environment (clear error naming each bad variable). */
export function readerConfigFromEnv(env: Env = process.env): ReaderConfig {
  const e = createConfig(readerEnvSchema, env);
  return {
    databaseUrl: e.DATABASE_URL,
    schema: e.PROJECTION_SCHEMA,
    port: e.PORT,
    host: e.HOST,
    rateLimit: { ratePerSecond: e.RATE_LIMIT_RPS, burst: e.RATE_LIMIT_BURST, trustProxy: e.TRUST_PROXY },
    corsOrigins: e.CORS_ORIGINS,
    cacheMaxAgeS: e.CACHE_MAX_AGE_S,
    catalogueMaxAgeS: e.CATALOGUE_MAX_AGE_S,
    poolMax: e.PG_POOL_MAX,
    statementTimeoutMs: e.STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: e.PG_CONNECT_TIMEOUT_MS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    benchRoutes: e.BENCH_ROUTES,
    logLevel: e.LOG_LEVEL,
  };
}

/** Defaults for everything but the database, for tests and the bench. */
export function readerConfig(databaseUrl: string, overrides: Partial<ReaderConfig> = {}): ReaderConfig {
  return { ...readerConfigFromEnv({ DATABASE_URL: databaseUrl }), ...overrides };
}
