import {
  baseConfigSchema,
  ConfigError,
  createConfig,
  type Env,
  envField,
  type Logger,
} from '@vault-yield/common';
import { z } from 'zod';
import { type TrustedProxies, trustedProxiesField } from './middleware/client-address.js';

export interface ReaderConfig {
  /** Read-only role URL. */
  databaseUrl: string;
  /** Projection schema (search_path). */
  schema: string;
  port: number;
  host: string;
  /** Per-client token bucket; ratePerSecond 0 disables it. */
  rateLimit: { ratePerSecond: number; burst: number; trustedProxies: TrustedProxies };
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
  /**
   * The HTTP server's own limits: time to receive a request's headers (slow-loris), time to
   * receive the whole request, idle time of a kept-alive connection, and open connections at
   * most (the rest are refused at accept).
   */
  http: {
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    keepAliveTimeoutMs: number;
    maxConnections: number;
  };
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
  TRUSTED_PROXIES: trustedProxiesField(),
  /** Replaced by TRUSTED_PROXIES (it trusted the leftmost, client-written entry): refused if set. */
  TRUST_PROXY: z
    .never({ error: 'replaced by TRUSTED_PROXIES (a hop count or a CIDR list); remove TRUST_PROXY' })
    .optional(),
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
  HTTP_HEADERS_TIMEOUT_MS: envField.int(100, 600_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: envField.int(100, 600_000).default(30_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: envField.int(0, 600_000).default(5_000),
  HTTP_MAX_CONNECTIONS: envField.int(1, 1_000_000).default(1_000),
  BENCH_ROUTES: envField.bool().default(false),
});

/** Reads the reader's settings from the environment (clear error naming each bad variable). */
export function readerConfigFromEnv(env: Env = process.env): ReaderConfig {
  const e = createConfig(readerEnvSchema, env);
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS)
    throw new ConfigError(
      `invalid configuration:\n  HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS (got ${e.HTTP_HEADERS_TIMEOUT_MS} > ${e.HTTP_REQUEST_TIMEOUT_MS})`,
    );
  return {
    databaseUrl: e.DATABASE_URL,
    schema: e.PROJECTION_SCHEMA,
    port: e.PORT,
    host: e.HOST,
    rateLimit: {
      ratePerSecond: e.RATE_LIMIT_RPS,
      burst: e.RATE_LIMIT_BURST,
      trustedProxies: e.TRUSTED_PROXIES,
    },
    corsOrigins: e.CORS_ORIGINS,
    cacheMaxAgeS: e.CACHE_MAX_AGE_S,
    catalogueMaxAgeS: e.CATALOGUE_MAX_AGE_S,
    poolMax: e.PG_POOL_MAX,
    statementTimeoutMs: e.STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: e.PG_CONNECT_TIMEOUT_MS,
    http: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.HTTP_MAX_CONNECTIONS,
    },
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    benchRoutes: e.BENCH_ROUTES,
    logLevel: e.LOG_LEVEL,
  };
}

/** Defaults for everything but the database, for tests and the bench. */
export function readerConfig(databaseUrl: string, overrides: Partial<ReaderConfig> = {}): ReaderConfig {
  return { ...readerConfigFromEnv({ DATABASE_URL: databaseUrl }), ...overrides };
}
