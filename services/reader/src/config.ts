import {
  baseConfigSchema,
  CONFIG_DEFAULTS,
  ConfigError,
  createConfig,
  doc,
  type Env,
  envField,
  configInt as int,
  type KafkaSecurity,
  kafkaSecurity,
  type LogFormat,
  type Logger,
  requireDirectUrl,
  sharedEnv,
} from '@vault-yield/common';
import { z } from 'zod';
import { type TrustedProxies, trustedProxiesField } from './middleware/client-address.js';
import {
  STREAM_CACHE_BYTES,
  STREAM_PAGE_BYTES,
  STREAM_PAGE_ROWS,
  STREAM_REPLAY_BYTES_PER_SECOND,
} from './stream/hub.js';

/**
 * The reader's one config shape (camelCase). Its defaults are the environment's
 * (`readerEnvSchema`); `readerConfigFromEnv` maps one onto the other, `readerConfig` gives the
 * defaults to tests and the bench.
 */
export const readerConfigSchema = z.object({
  /** Read-only role URL. */
  databaseUrl: z.string().min(1),
  /**
   * How `databaseUrl` is pooled: `transaction` (PgBouncer transaction mode) sets nothing per
   * connection (the role's settings give search_path and statement_timeout, checked at start)
   * and names no statement; the live streams' LISTEN then goes to `directUrl`.
   */
  pooling: z.enum(['session', 'transaction']).default('session'),
  /** A URL straight to Postgres for the LISTEN connection (default: `databaseUrl`). */
  directUrl: z.string().min(1).optional(),
  /** Projection schema (search_path). */
  schema: z.string().min(1),
  port: int(0, 65_535),
  host: z.string().min(1),
  /** Per-client token bucket; ratePerSecond 0 disables it. */
  rateLimit: z.object({
    ratePerSecond: z.number().min(0),
    burst: int(1),
    trustedProxies: z.custom<TrustedProxies>((v) => typeof v === 'object' && v !== null),
  }),
  /**
   * Per-client cap on requests in flight (keyed like the rate limit): `perClient` at once (0 =
   * off), `queue` more waiting for a slot, the rest 429.
   */
  concurrency: z.object({ perClient: int(), queue: int() }),
  /**
   * Bearer token of the operators: `/metrics` and `/ready`'s details answer only requests that
   * carry it (`Authorization: Bearer …`). Unset: `/metrics` is refused to everyone and `/ready`
   * answers its status alone.
   */
  adminToken: z.string().optional(),
  /** Allowed CORS origins; '*' = any (public read API). */
  corsOrigins: z.union([z.literal('*'), z.array(z.string())]),
  /** Cache-Control max-age of vault resources (snapshot, equity, events, tx, vaults), seconds. */
  cacheMaxAgeS: int(),
  /** Cache-Control max-age of the catalogue and universe, seconds. */
  catalogueMaxAgeS: int(),
  poolMax: int(1),
  statementTimeoutMs: int(),
  /** How long a connection attempt to Postgres may take before the request gets a 503. */
  connectTimeoutMs: int(),
  /**
   * The HTTP server's own limits: time to receive a request's headers (slow-loris), time to
   * receive the whole request, idle time of a kept-alive connection, and open connections at
   * most (the rest are refused at accept).
   */
  http: z.object({
    headersTimeoutMs: int(),
    requestTimeoutMs: int(),
    keepAliveTimeoutMs: int(),
    maxConnections: int(1),
  }),
  /**
   * Open connections of one client at once, by its socket's address (an IPv4 address; an IPv6
   * /64, /56 and /48, each its own cap): more are reset at accept. 0 = no cap. A trusted proxy's
   * connections are not counted.
   */
  connections: z.object({ perAddress: int(), perIpv6Slash56: int(), perIpv6Slash48: int() }),
  /** Longest wait for in-flight requests on stop before connections are cut. */
  shutdownGraceMs: int(),
  /** Registers GET /bench/hello (plain hello world, for the bench's baseline). */
  benchRoutes: z.boolean(),
  /**
   * Live streams (server-sent events): open at most `maxTotal` in the process and `perClient` per
   * client (keyed as the rate limit; beyond either, 503 with Retry-After); a comment line every
   * `heartbeatMs` on an idle stream; a write the client has not taken within `writeTimeoutMs`
   * (it stopped reading) closes the stream and frees its slot. A read for the streams holds at
   * most `pageRows` ledger rows and `pageBytes` bytes of their JSON (whole commits, or a slice of
   * a larger one's rows: its first row whatever its size), the reads kept in memory at most
   * `cacheBytes`; the streams catching up behind the head read `replayBytesPerSecond` of JSON a
   * second together (absent: the hub's defaults).
   */
  streams: z.object({
    maxTotal: int(0),
    perClient: int(0),
    heartbeatMs: int(1_000),
    writeTimeoutMs: int(100),
    pageRows: int(1).optional(),
    pageBytes: int(1).optional(),
    cacheBytes: int(0).optional(),
    replayBytesPerSecond: int(0).optional(),
  }),
  /**
   * Freshness (`/ready`, the `reader_projection_lag_*` gauges): the log's high watermarks are read
   * from `kafka` (absent: the records of lag are unknown), the chain head from the indexer's
   * checkpoint in `indexerSchema` (null: not read); `/ready` answers 503 beyond `maxLagRecords`
   * records or `maxLagSeconds` seconds of chain time (0 = no limit).
   */
  freshness: z.object({
    kafka: z
      .object({
        brokers: z.array(z.string().min(1)).min(1).readonly(),
        topic: z.string().min(1),
        security: z.custom<KafkaSecurity>((v) => typeof v === 'object' && v !== null),
      })
      .nullable(),
    indexerSchema: z.string().min(1).nullable(),
    maxLagRecords: int(),
    maxLagSeconds: int(),
  }),
  logLevel: envField.logLevel(),
  /** LOG_FORMAT: pretty lines on a terminal (auto), or JSON / pretty forced. */
  logFormat: z.custom<LogFormat>((v) => typeof v === 'string').optional(),
  /** Optional logger to use instead of a new one (tests). */
  logger: z.custom<Logger>((v) => typeof v === 'object' && v !== null).optional(),
});

export type ReaderConfig = z.output<typeof readerConfigSchema>;

/** Kafka's SASL/TLS fields, as every service declares them (whatever @vault-yield/common adds). */
type KafkaSecurityKey = Extract<keyof typeof sharedEnv, `KAFKA_SASL${string}` | `KAFKA_SSL${string}`>;
const kafkaSecurityEnv = Object.fromEntries(
  Object.entries(sharedEnv).filter(([k]) => /^KAFKA_(SASL|SSL)/.test(k)),
) as Pick<typeof sharedEnv, KafkaSecurityKey>;

export const readerEnvSchema = baseConfigSchema.extend({
  DATABASE_URL: sharedEnv.DATABASE_URL,
  DATABASE_POOLING: sharedEnv.DATABASE_POOLING,
  DATABASE_DIRECT_URL: sharedEnv.DATABASE_DIRECT_URL,
  PROJECTION_SCHEMA: sharedEnv.PROJECTION_SCHEMA,
  PORT: doc(envField.port().default(8080), 'listen port'),
  HOST: doc(z.string().min(1).default('127.0.0.1'), 'listen address'),
  RATE_LIMIT_RPS: doc(
    z.coerce.number().min(0).max(1_000_000).default(20),
    'per-client token bucket on every route but `/health`, CORS preflights included: requests a second (0 = off); a client is an IPv4 address or an IPv6 /64 (an IPv4-mapped IPv6 address counts as IPv4)',
  ),
  RATE_LIMIT_BURST: doc(envField.int(1, 1_000_000).default(40), "the token bucket's size"),
  TRUSTED_PROXIES: doc(
    trustedProxiesField(),
    'proxies in front of the reader: a hop count (`1`) or a comma-separated list of addresses/CIDR ranges (`10.0.0.0/8,fd00::/8`); the client is then the rightmost `X-Forwarded-For` entry not written by one of them (see below)',
    '`none`',
  ),
  /** Requests of one client in flight at once; unset: max(1, PG_POOL_MAX / 4); 0 = no cap. */
  CLIENT_CONCURRENCY: doc(
    envField.int(0, 10_000).optional(),
    "requests of one client (keyed as the rate limit) handled at once; beyond them and `CLIENT_QUEUE` waiting, 429 `rate_limited` with `Retry-After` (0 = no cap), so one client's burst of slow requests cannot take the whole pool",
    'max(1, `PG_POOL_MAX`/4)',
  ),
  CLIENT_QUEUE: doc(
    envField.int(0, 10_000).default(16),
    'requests of one client that may wait for one of its slots',
  ),
  ADMIN_TOKEN: doc(
    z
      .string()
      .regex(/^[\x21-\x7e]{16,512}$/, 'expected 16 to 512 visible ASCII characters (no spaces)')
      .optional(),
    "operators' bearer token (16–512 visible ASCII characters): `/metrics` answers only `Authorization: Bearer <token>` (401 otherwise, and to everyone while unset), `/ready` gives its details only with it",
    'unset',
  ),
  /** Replaced by TRUSTED_PROXIES (it trusted the leftmost, client-written entry): refused if set. */
  TRUST_PROXY: z
    .never({ error: 'replaced by TRUSTED_PROXIES (a hop count or a CIDR list); remove TRUST_PROXY' })
    .optional(),
  CORS_ORIGINS: doc(
    z
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
    'allowed CORS origins, comma-separated; `*` = any (public read API)',
    '`*`',
  ),
  CACHE_MAX_AGE_S: doc(
    envField.int(0, 86_400).default(2),
    '`Cache-Control` max-age of vault resources (snapshot, equity, events, tx, vaults), seconds',
  ),
  CATALOGUE_MAX_AGE_S: doc(
    envField.int(0, 86_400).default(30),
    '`Cache-Control` max-age of the catalogue and universe, seconds',
  ),
  PG_POOL_MAX: doc(envField.int(1, 200).default(10), 'Postgres connections at most'),
  STATEMENT_TIMEOUT_MS: doc(
    envField.int(100, 600_000).default(5000),
    "Postgres `statement_timeout` of the reader's queries",
  ),
  PG_CONNECT_TIMEOUT_MS: doc(
    envField.int(100, 600_000).default(3000),
    'how long a connection attempt to Postgres may take before the request gets a 503',
  ),
  SHUTDOWN_GRACE_MS: doc(
    envField.int(0, 600_000).default(10_000),
    'longest wait for in-flight requests on stop before connections are cut',
  ),
  HTTP_HEADERS_TIMEOUT_MS: doc(
    envField.int(100, 600_000).default(10_000),
    "time to receive a request's headers, else 408 and the connection is closed (≤ `HTTP_REQUEST_TIMEOUT_MS`)",
  ),
  HTTP_REQUEST_TIMEOUT_MS: doc(
    envField.int(100, 600_000).default(30_000),
    'time to receive the whole request, else 408 and the connection is closed',
  ),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: doc(
    envField.int(0, 600_000).default(5_000),
    'idle time of a kept-alive connection',
  ),
  HTTP_MAX_CONNECTIONS: doc(
    envField.int(1, 1_000_000).default(1_000),
    'open connections at most (more are closed at accept)',
  ),
  MAX_CONNECTIONS_PER_ADDRESS: doc(
    envField.int(0, 1_000_000).default(64),
    "open connections of one client address (an IPv4 address or an IPv6 /64, the socket's peer) at once; more are reset at accept, before a byte is read (0 = no cap). Not applied to `TRUSTED_PROXIES`' own connections (with a hop count: to none)",
  ),
  MAX_CONNECTIONS_PER_IPV6_56: doc(
    envField.int(0, 1_000_000).default(128),
    'open connections of one IPv6 /56 at once, whatever its /64s (0 = no cap)',
  ),
  MAX_CONNECTIONS_PER_IPV6_48: doc(
    envField.int(0, 1_000_000).default(256),
    'open connections of one IPv6 /48 at once, whatever its /64s and /56s (0 = no cap)',
  ),
  BENCH_ROUTES: doc(envField.bool().default(false), "registers `GET /bench/hello` (the bench's baseline)"),
  STREAM_MAX: doc(
    envField.int(0, 1_000_000).default(800),
    'live streams (`GET /v1/stream`, `/v1/vault/{vault}/stream`) open at once in the process; beyond it 503 `unavailable` with `Retry-After` (keep it below `HTTP_MAX_CONNECTIONS`: each holds a connection)',
  ),
  STREAM_MAX_PER_CLIENT: doc(
    envField.int(0, 1_000_000).default(8),
    'live streams one client (keyed as the rate limit) may hold open; beyond it 503 `unavailable` with `Retry-After`',
  ),
  STREAM_HEARTBEAT_MS: doc(
    envField.int(1_000, 600_000).default(15_000),
    'a comment line is sent on a live stream that has been quiet this long (keeps proxies from closing it)',
  ),
  STREAM_PAGE_ROWS: doc(
    envField.int(1, 1_000_000).default(STREAM_PAGE_ROWS),
    'ledger rows the live streams read from Postgres at once at most: a page of whole commits, or a slice of the rows of a commit that holds more',
  ),
  STREAM_PAGE_KIB: doc(
    envField.int(1, 1_048_576).default(STREAM_PAGE_BYTES / 1024),
    "KiB of ledger rows' JSON the live streams read from Postgres at once at most, as `STREAM_PAGE_ROWS` (a commit holding more is read in slices; a row larger than it comes alone)",
  ),
  STREAM_CACHE_MIB: doc(
    envField.int(0, 65_536).default(STREAM_CACHE_BYTES / 1024 / 1024),
    "MiB of pages the live streams' hub keeps in memory (its rows' and snapshots' JSON) for streams a little behind; the oldest go first",
  ),
  STREAM_REPLAY_KIB_S: doc(
    envField.int(0, 1_048_576).default(STREAM_REPLAY_BYTES_PER_SECOND / 1024),
    'KiB of JSON a second the live streams catching up behind the head (resumed from an old `Last-Event-ID`) read together, whoever asked first first; each waits its turn between pages with a keep-alive; streams at the head never wait (0: unbounded)',
  ),
  STREAM_WRITE_TIMEOUT_MS: doc(
    envField.int(100, 600_000).default(30_000),
    "a live stream whose client has not taken a write this long (it stopped reading: the connection's buffers are full) is closed and its slot freed",
  ),
  KAFKA_BROKERS: doc(
    envField.brokers().optional(),
    "comma-separated `host:port` list (the reader: only to read the topic's high watermarks for `/ready`'s records of lag)",
    'unset: no records of lag',
  ),
  ...kafkaSecurityEnv,
  KAFKA_TOPIC: sharedEnv.KAFKA_TOPIC,
  INDEXER_SCHEMA: doc(
    envField.identifier().default(CONFIG_DEFAULTS.projectionSchema),
    "schema holding the live indexer's checkpoint (`status`, `reindex`, `republish`; the reader: the chain head of `/ready`'s blocks and seconds of lag, read with its role when granted)",
    '`PROJECTION_SCHEMA` (reader: `vault_yield`)',
  ),
  READY_MAX_LAG_RECORDS: doc(
    envField.int(0, 1_000_000_000).default(10_000),
    "`/ready` answers 503 while the projection has more records of the log than this left to fold (the topic's high watermarks minus the offsets stored with the live projection; needs `KAFKA_BROKERS`), so a load balancer drops a reader whose replica fell behind; 0 = no limit",
  ),
  READY_MAX_LAG_SECONDS: doc(
    envField.int(0, 31_536_000).default(300),
    "`/ready` answers 503 while the newest record folded is more than this much chain time (seconds) behind the indexer's checkpoint with records left to fold (needs `KAFKA_BROKERS` and a readable `INDEXER_SCHEMA`); 0 = no limit",
  ),
});

/** Reads the reader's settings from the environment (clear error naming each bad variable). */
export function readerConfigFromEnv(env: Env = process.env): ReaderConfig {
  const e = createConfig(readerEnvSchema, env);
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS)
    throw new ConfigError(
      `invalid configuration:\n  HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS (got ${e.HTTP_HEADERS_TIMEOUT_MS} > ${e.HTTP_REQUEST_TIMEOUT_MS})`,
    );
  requireDirectUrl(e, 'the live streams LISTEN on a session of their own');
  return {
    databaseUrl: e.DATABASE_URL,
    pooling: e.DATABASE_POOLING,
    ...(e.DATABASE_DIRECT_URL ? { directUrl: e.DATABASE_DIRECT_URL } : {}),
    schema: e.PROJECTION_SCHEMA,
    port: e.PORT,
    host: e.HOST,
    rateLimit: {
      ratePerSecond: e.RATE_LIMIT_RPS,
      burst: e.RATE_LIMIT_BURST,
      trustedProxies: e.TRUSTED_PROXIES,
    },
    concurrency: {
      perClient: e.CLIENT_CONCURRENCY ?? Math.max(1, Math.floor(e.PG_POOL_MAX / 4)),
      queue: e.CLIENT_QUEUE,
    },
    ...(e.ADMIN_TOKEN === undefined ? {} : { adminToken: e.ADMIN_TOKEN }),
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
    connections: {
      perAddress: e.MAX_CONNECTIONS_PER_ADDRESS,
      perIpv6Slash56: e.MAX_CONNECTIONS_PER_IPV6_56,
      perIpv6Slash48: e.MAX_CONNECTIONS_PER_IPV6_48,
    },
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    benchRoutes: e.BENCH_ROUTES,
    streams: {
      maxTotal: e.STREAM_MAX,
      perClient: e.STREAM_MAX_PER_CLIENT,
      heartbeatMs: e.STREAM_HEARTBEAT_MS,
      writeTimeoutMs: e.STREAM_WRITE_TIMEOUT_MS,
      pageRows: e.STREAM_PAGE_ROWS,
      pageBytes: e.STREAM_PAGE_KIB * 1024,
      cacheBytes: e.STREAM_CACHE_MIB * 1024 * 1024,
      replayBytesPerSecond: e.STREAM_REPLAY_KIB_S * 1024,
    },
    freshness: {
      kafka: e.KAFKA_BROKERS
        ? { brokers: e.KAFKA_BROKERS, topic: e.KAFKA_TOPIC, security: kafkaSecurity(e) }
        : null,
      indexerSchema: e.INDEXER_SCHEMA,
      maxLagRecords: e.READY_MAX_LAG_RECORDS,
      maxLagSeconds: e.READY_MAX_LAG_SECONDS,
    },
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
  };
}

/** Defaults for everything but the database, for tests and the bench. */
export function readerConfig(databaseUrl: string, overrides: Partial<ReaderConfig> = {}): ReaderConfig {
  return { ...readerConfigFromEnv({ DATABASE_URL: databaseUrl }), ...overrides };
}
