import {
  baseConfigSchema,
  CONFIG_DEFAULTS,
  createConfig,
  doc,
  type Env,
  envField,
  configInt as int,
  type Logger,
  requireDirectUrl,
  sharedEnv,
} from '@vault-yield/common';
import { parseWebhookSecretKey, type WebhookSecretKeys, webhookSecretKeys } from '@vault-yield/store';
import { z } from 'zod';
import { parseAllowList, type Resolve } from './address.js';

/** The deliverer's defaults, declared once (env schema and camelCase config). */
export const WEBHOOK_DEFAULTS = {
  pollIntervalMs: 500,
  timeoutMs: 10_000,
  /** 24 h: a receiver down for a day still gets every row. */
  retryPeriodMs: 86_400_000,
  backoffBaseMs: 1_000,
  backoffMaxMs: 600_000,
  concurrency: 16,
  scanBatch: 1_000,
  /** Delivered rows kept for `webhooks deliveries`, 7 days. */
  retentionMs: 7 * 86_400_000,
  /** A connection to Postgres not made in this long fails the round (tried again). */
  connectTimeoutMs: 5_000,
  /** Longest statement (Postgres cancels it); the deliverer's are index probes and small batches. */
  statementTimeoutMs: 30_000,
  /** A session idle inside a transaction this long is ended by Postgres (its row locks freed). */
  idleInTransactionTimeoutMs: 60_000,
  /** `/health` answers 503 when no round (or, standing by, no lock attempt) completed for this long. */
  healthStaleMs: 60_000,
  /** Networks inside the deliverer's reach that may be delivered to: none. */
  allowNetworks: '',
  /** Deliveries in flight to one endpoint: a slow one holds at most this many of the slots. */
  endpointConcurrency: 4,
  /** Failed attempts in a row (5xx, 408, 429, time-out, no connection) that pause an endpoint. */
  breakerFailures: 5,
  /**
   * An endpoint failing without a success for this long is paused too, whatever the count: one
   * whose attempts each hang until the time-out reaches the count slowly. 0: off.
   */
  breakerFailingMs: 300_000,
  /** A paused endpoint gets one probe delivery this often; its success resumes it. */
  breakerProbeMs: 30_000,
  /** Parked rows kept for `webhooks deliveries --failed` and `retry`, 30 days. */
  parkedRetentionMs: 30 * 86_400_000,
} as const;

/** A list of networks for WEBHOOK_ALLOW_NETWORKS, checked when read. */
const networks = z.string().superRefine((text, ctx) => {
  try {
    parseAllowList(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
  }
});

const DAY = 86_400_000;

/**
 * Environment of the deliverer (this service; `vault-yield webhooks run`) and of the CLI's operator
 * subcommands (`vault-yield webhooks add`, …):
 * formats and defaults; `webhookConfigFromEnv` turns it into the camelCase config.
 */
export const webhooksEnvSchema = baseConfigSchema.extend({
  DATABASE_URL: sharedEnv.DATABASE_URL,
  DATABASE_POOLING: sharedEnv.DATABASE_POOLING,
  DATABASE_DIRECT_URL: sharedEnv.DATABASE_DIRECT_URL,
  PROJECTION_SCHEMA: sharedEnv.PROJECTION_SCHEMA,
  VIEWS_SCHEMA: sharedEnv.VIEWS_SCHEMA,
  WEBHOOKS_SCHEMA: doc(
    envField.identifier().optional(),
    "schema holding the webhook endpoints, their cursors and deliveries (the ledger read is the live schema's, behind `VIEWS_SCHEMA`); keep it on a schema `rebuild retire` keeps, as the default is",
    '`PROJECTION_SCHEMA`',
  ),
  WEBHOOK_POLL_INTERVAL_MS: doc(
    envField.int(10, 60_000).default(WEBHOOK_DEFAULTS.pollIntervalMs),
    "how often the deliverer looks for new ledger rows and due retries when nothing woke it (the projector's commit notifications wake it at once with `WEBHOOK_LISTEN`)",
  ),
  WEBHOOK_LISTEN: doc(
    envField.bool().default(true),
    "wake the deliverer on the projector's commit notifications (Postgres `LISTEN`); polling stays the fallback",
  ),
  WEBHOOK_TIMEOUT_MS: doc(
    envField.int(100, 120_000).default(WEBHOOK_DEFAULTS.timeoutMs),
    'time a receiver has to answer one delivery; a time-out is retried',
  ),
  WEBHOOK_RETRY_PERIOD_MS: doc(
    envField.int(0, 30 * DAY).default(WEBHOOK_DEFAULTS.retryPeriodMs),
    'how long a delivery is retried (5xx, 408, 429, time-outs, connection errors) from when it was queued (or `retry`); a failure after it parks the delivery',
  ),
  WEBHOOK_BACKOFF_BASE_MS: doc(
    envField.int(1, 3_600_000).default(WEBHOOK_DEFAULTS.backoffBaseMs),
    'first retry delay; each next one doubles, up to `WEBHOOK_BACKOFF_MAX_MS`, each drawn between half and all of it (jitter)',
  ),
  WEBHOOK_BACKOFF_MAX_MS: doc(
    envField.int(1, DAY).default(WEBHOOK_DEFAULTS.backoffMaxMs),
    'longest retry delay (a `Retry-After` longer than it is cut to it)',
  ),
  WEBHOOK_CONCURRENCY: doc(
    envField.int(1, 1_000).default(WEBHOOK_DEFAULTS.concurrency),
    'deliveries in flight at once, across endpoints (one per endpoint and vault: a vault is in order)',
  ),
  WEBHOOK_SCAN_BATCH: doc(
    envField.int(1, 100_000).default(WEBHOOK_DEFAULTS.scanBatch),
    "ledger rows one endpoint's cursor moves over per statement",
  ),
  WEBHOOK_RETENTION_MS: doc(
    envField.int(0, 365 * DAY).default(WEBHOOK_DEFAULTS.retentionMs),
    'how long delivered rows are kept for `webhooks deliveries` (parked ones: `WEBHOOK_PARKED_RETENTION_MS`)',
  ),
  WEBHOOK_PARKED_RETENTION_MS: doc(
    envField.int(0, 365 * DAY).default(WEBHOOK_DEFAULTS.parkedRetentionMs),
    'how long parked rows are kept for `webhooks deliveries --failed` and `retry` (from when they were parked); older ones are deleted. 0: kept until retried or their endpoint is removed',
  ),
  WEBHOOK_ALLOW_NETWORKS: doc(
    networks.optional(),
    'networks inside your own that endpoints may be in, comma-separated CIDRs (`10.0.0.0/8,fd00::/8`, `127.0.0.0/8` for receivers on the same host). Default none: an endpoint whose host is or resolves to a loopback, private, link-local (169.254.169.254), CGNAT, multicast, unspecified or reserved address, in any IPv4 or IPv6 form, is refused at `add` and its deliveries parked',
    'none: no address inside the network',
  ),
  WEBHOOK_ENDPOINT_CONCURRENCY: doc(
    envField.int(1, 1_000).default(WEBHOOK_DEFAULTS.endpointConcurrency),
    'deliveries in flight at once to one endpoint (of `WEBHOOK_CONCURRENCY`): a slow endpoint never holds every slot; due rows are taken round robin over endpoints',
  ),
  WEBHOOK_BREAKER_FAILURES: doc(
    envField.int(1, 1_000_000).default(WEBHOOK_DEFAULTS.breakerFailures),
    'failed attempts in a row (5xx, 408, 429, time-out, no connection) after which an endpoint is paused (or after `WEBHOOK_BREAKER_FAILING_MS` of failures): nothing is sent to it but one probe every `WEBHOOK_BREAKER_PROBE_MS`; a probe answered 2xx resumes it',
  ),
  WEBHOOK_BREAKER_FAILING_MS: doc(
    envField.int(0, 30 * DAY).default(WEBHOOK_DEFAULTS.breakerFailingMs),
    'an endpoint whose attempts have all failed for this long (since the first failed one was sent) is paused as after `WEBHOOK_BREAKER_FAILURES` failures, whatever their count: one whose every attempt hangs until `WEBHOOK_TIMEOUT_MS` reaches the count slowly. 0: off (the count alone)',
  ),
  WEBHOOK_BREAKER_PROBE_MS: doc(
    envField.int(100, DAY).default(WEBHOOK_DEFAULTS.breakerProbeMs),
    'how often a paused endpoint gets one probe delivery (its oldest due row)',
  ),
  WEBHOOK_STATEMENT_TIMEOUT_MS: doc(
    envField.int(100, 3_600_000).default(WEBHOOK_DEFAULTS.statementTimeoutMs),
    "longest statement of the deliverer: Postgres cancels it, the round fails (`/health` answers 503 meanwhile) and is tried again; with `DATABASE_POOLING=transaction` nothing is set per session, so the role's `statement_timeout` decides",
  ),
  WEBHOOK_SECRET_KEY: doc(
    secretKeyField('WEBHOOK_SECRET_KEY').optional(),
    "the key (32 bytes: 64 hex digits or base64, `openssl rand -base64 32`) that seals the endpoints' signing secrets in the database (AES-256-GCM); required by `webhooks run`, `add` and `rekey` — without it they refuse to start",
    'unset: refused',
  ),
  WEBHOOK_SECRET_KEYS: doc(
    z
      .string()
      .optional()
      .transform((s) =>
        (s ?? '')
          .split(',')
          .map((k) => k.trim())
          .filter(Boolean),
      )
      .pipe(z.array(secretKeyField('WEBHOOK_SECRET_KEYS'))),
    'older keys, comma-separated, that still open secrets sealed before a rotation (`webhooks rekey` seals every secret under `WEBHOOK_SECRET_KEY`; then drop them)',
    'none',
  ),
  METRICS_PORT: sharedEnv.METRICS_PORT.optional(),
  METRICS_HOST: sharedEnv.METRICS_HOST,
});

/** A 32-byte key's text, checked without echoing it. */
function secretKeyField(name: string) {
  return z.string().superRefine((text, ctx) => {
    try {
      parseWebhookSecretKey(text, name);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
    }
  });
}

/**
 * The signing secrets' keyring from the environment; throws (naming the variable, never a key)
 * when WEBHOOK_SECRET_KEY is not set: the deliverer, `add` and `rekey` refuse to run without it.
 */
export function secretKeysFromEnv(env: WebhooksEnv, what: string): WebhookSecretKeys {
  if (!env.WEBHOOK_SECRET_KEY)
    throw new Error(
      `${what} needs WEBHOOK_SECRET_KEY (32 bytes, e.g. \`openssl rand -base64 32\`): the endpoints' signing secrets are kept encrypted under it`,
    );
  return webhookSecretKeys(env.WEBHOOK_SECRET_KEY, env.WEBHOOK_SECRET_KEYS);
}

export type WebhooksEnv = z.output<typeof webhooksEnvSchema>;

/**
 * The webhooks' environment. `use`: `deliverer` (the service) holds a session of its own (its
 * lock, its LISTEN), so behind a transaction-mode pooler it needs `DATABASE_DIRECT_URL`; `admin`
 * (add, list, remove, deliveries, retry) runs plain statements, which the pooler serves.
 */
export function loadWebhooksEnv(
  env: Env = process.env,
  use: 'deliverer' | 'admin' = 'deliverer',
): WebhooksEnv {
  const e = createConfig(webhooksEnvSchema, env);
  if (use === 'deliverer') {
    requireDirectUrl(e, 'the deliverer holds its lock and LISTENs on a session of its own');
    secretKeysFromEnv(e, 'the deliverer');
  }
  return e;
}

const identifier = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/);

/**
 * A wake-up source: calls `wake` whenever new ledger rows may be there (a Postgres NOTIFY, a
 * test); returns its stop. Polling every `pollIntervalMs` stays the fallback.
 */
export type WakeUpSource = (wake: () => void) => Promise<() => Promise<void>>;

/** The deliverer's one config shape (camelCase), with every default. */
export const webhookDelivererConfigSchema = z
  .object({
    databaseUrl: z.string().min(1),
    /**
     * How `databaseUrl` is pooled: `transaction` (PgBouncer transaction mode): no statement is
     * named; the one session the deliverer needs (its advisory lock) goes to `directUrl`.
     */
    pooling: z.enum(['session', 'transaction']).default('session'),
    /** Straight to Postgres, for the session lock (default `databaseUrl`); required with `transaction`. */
    directUrl: z.string().min(1).optional(),
    /** Schema of the webhook tables. */
    schema: identifier.default(CONFIG_DEFAULTS.projectionSchema),
    /** Projection schema read when the views schema has no live record. */
    projectionSchema: identifier.default(CONFIG_DEFAULTS.projectionSchema),
    /** Views schema whose live record names the projection schema whose ledger is delivered. */
    viewsSchema: identifier.default(CONFIG_DEFAULTS.viewsSchema),
    pollIntervalMs: int(10, 60_000).default(WEBHOOK_DEFAULTS.pollIntervalMs),
    timeoutMs: int(100, 120_000).default(WEBHOOK_DEFAULTS.timeoutMs),
    retryPeriodMs: int(0, 30 * DAY).default(WEBHOOK_DEFAULTS.retryPeriodMs),
    backoffBaseMs: int(1, 3_600_000).default(WEBHOOK_DEFAULTS.backoffBaseMs),
    backoffMaxMs: int(1, DAY).default(WEBHOOK_DEFAULTS.backoffMaxMs),
    concurrency: int(1, 1_000).default(WEBHOOK_DEFAULTS.concurrency),
    scanBatch: int(1, 100_000).default(WEBHOOK_DEFAULTS.scanBatch),
    retentionMs: int(0, 365 * DAY).default(WEBHOOK_DEFAULTS.retentionMs),
    connectTimeoutMs: int(100, 600_000).default(WEBHOOK_DEFAULTS.connectTimeoutMs),
    statementTimeoutMs: int(100, 3_600_000).default(WEBHOOK_DEFAULTS.statementTimeoutMs),
    idleInTransactionTimeoutMs: int(100, 3_600_000).default(WEBHOOK_DEFAULTS.idleInTransactionTimeoutMs),
    healthStaleMs: int(1_000, DAY).default(WEBHOOK_DEFAULTS.healthStaleMs),
    /** Networks endpoints may be in (CIDRs, comma-separated); default none. */
    allowNetworks: networks.default(WEBHOOK_DEFAULTS.allowNetworks),
    /** How endpoint host names resolve (default dns.lookup, every address); tests inject theirs. */
    resolve: z.custom<Resolve>((v) => typeof v === 'function').optional(),
    endpointConcurrency: int(1, 1_000).default(WEBHOOK_DEFAULTS.endpointConcurrency),
    breakerFailures: int(1, 1_000_000).default(WEBHOOK_DEFAULTS.breakerFailures),
    breakerFailingMs: int(0, 30 * DAY).default(WEBHOOK_DEFAULTS.breakerFailingMs),
    breakerProbeMs: int(100, DAY).default(WEBHOOK_DEFAULTS.breakerProbeMs),
    parkedRetentionMs: int(0, 365 * DAY).default(WEBHOOK_DEFAULTS.parkedRetentionMs),
    metricsPort: int(0, 65_535).optional(),
    metricsHost: z.string().min(1).default('127.0.0.1'),
    /** Opens the endpoints' signing secrets (WEBHOOK_SECRET_KEY, and older keys); plaintext ones are sealed under it. */
    secretKeys: z.custom<WebhookSecretKeys>(
      (v) => typeof v === 'object' && v !== null && 'current' in v && 'byId' in v,
      { message: 'required: the deliverer opens the signing secrets with it (WEBHOOK_SECRET_KEY)' },
    ),
    logger: z.custom<Logger>((v) => typeof v === 'object' && v !== null),
    wakeUp: z.custom<WakeUpSource>((v) => typeof v === 'function').optional(),
  })
  .refine((c) => c.pooling !== 'transaction' || c.directUrl !== undefined, {
    path: ['directUrl'],
    message: "required with pooling 'transaction' (the deliverer's lock needs a session of its own)",
  });

/** What `createWebhookDeliverer` takes: defaults may be left out. */
export type WebhookDelivererConfig = z.input<typeof webhookDelivererConfigSchema>;
export type ResolvedWebhookDelivererConfig = z.output<typeof webhookDelivererConfigSchema>;

/** The deliverer's config from its validated environment (the service's main, `webhooks run`). */
export function webhookConfigFromEnv(env: WebhooksEnv, logger: Logger): WebhookDelivererConfig {
  return {
    databaseUrl: env.DATABASE_URL,
    pooling: env.DATABASE_POOLING,
    ...(env.DATABASE_DIRECT_URL ? { directUrl: env.DATABASE_DIRECT_URL } : {}),
    schema: env.WEBHOOKS_SCHEMA ?? env.PROJECTION_SCHEMA,
    projectionSchema: env.PROJECTION_SCHEMA,
    viewsSchema: env.VIEWS_SCHEMA,
    pollIntervalMs: env.WEBHOOK_POLL_INTERVAL_MS,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    retryPeriodMs: env.WEBHOOK_RETRY_PERIOD_MS,
    backoffBaseMs: env.WEBHOOK_BACKOFF_BASE_MS,
    backoffMaxMs: env.WEBHOOK_BACKOFF_MAX_MS,
    concurrency: env.WEBHOOK_CONCURRENCY,
    scanBatch: env.WEBHOOK_SCAN_BATCH,
    retentionMs: env.WEBHOOK_RETENTION_MS,
    parkedRetentionMs: env.WEBHOOK_PARKED_RETENTION_MS,
    allowNetworks: env.WEBHOOK_ALLOW_NETWORKS ?? WEBHOOK_DEFAULTS.allowNetworks,
    endpointConcurrency: env.WEBHOOK_ENDPOINT_CONCURRENCY,
    breakerFailures: env.WEBHOOK_BREAKER_FAILURES,
    breakerFailingMs: env.WEBHOOK_BREAKER_FAILING_MS,
    breakerProbeMs: env.WEBHOOK_BREAKER_PROBE_MS,
    statementTimeoutMs: env.WEBHOOK_STATEMENT_TIMEOUT_MS,
    metricsPort: env.METRICS_PORT,
    metricsHost: env.METRICS_HOST,
    secretKeys: secretKeysFromEnv(env, 'the deliverer'),
    logger,
  };
}
