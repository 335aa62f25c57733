import { createLogger, doc, envField, kafkaEnv, type Logger, sharedEnv } from '@vault-yield/common';
import { PROJECTOR_BATCH_DEFAULTS } from '@vault-yield/projector';
import { z } from 'zod';

const logLevel = (byDefault: 'info' | 'warn') =>
  doc(
    envField.logLevel().default(byDefault),
    'pino level (`migrate`, `dead-letters`, `dev`: `info`; the other commands: `warn`)',
  );

/**
 * The one environment schema of the cli: every variable a command reads, with its format and
 * default. Each command's schema is picked (and where a command needs it otherwise, extended)
 * from it, so every command reads a variable the same way with the same default.
 */
export const opsEnvSchema = z.object({
  DATABASE_URL: sharedEnv.DATABASE_URL,
  MIGRATE_DATABASE_URL: sharedEnv.MIGRATE_DATABASE_URL,
  WRITER_ROLE: sharedEnv.WRITER_ROLE.optional(),
  ...kafkaEnv,
  KAFKA_TOPIC: sharedEnv.KAFKA_TOPIC,
  /** A one-shot command's wait for a broker to answer before its one-line failure. */
  KAFKA_CONNECT_BUDGET_MS: doc(
    envField.int(0).default(5_000),
    "how long a command (not `dev`) waits for a broker of `KAFKA_BROKERS` to answer before it fails in one line, ms (0 = the Kafka client's own retries, ≈ 40 s); raise it on a slow link",
  ),
  /** Schema of the views the reader reads; its target is the live projection schema. */
  VIEWS_SCHEMA: sharedEnv.VIEWS_SCHEMA,
  /** The projection schema that is live before any switch (and the indexer's schema by default). */
  PROJECTION_SCHEMA: sharedEnv.PROJECTION_SCHEMA,
  /** Group of the live projector (status, verify), when the live schema has no build record. */
  CONSUMER_GROUP: sharedEnv.CONSUMER_GROUP,
  READER_ROLE: sharedEnv.READER_ROLE.optional(),
  SCREEN_TOPIC: sharedEnv.SCREEN_TOPIC,
  CATALOGUE_TOPIC: sharedEnv.CATALOGUE_TOPIC,
  MIN_DAILY_RETURNS: sharedEnv.MIN_DAILY_RETURNS,
  /** Partitions folded at once by the build's projector, and its Postgres pool. */
  PROJECTOR_CONCURRENCY: doc(
    envField.int(1, 64).default(PROJECTOR_BATCH_DEFAULTS.concurrency),
    'partitions one projector instance (or build) folds at once (their Postgres transactions overlap)',
  ),
  PG_POOL_MAX: doc(
    envField.int(1, 100).default(6),
    "Postgres connections at most (a projector's, or a build's)",
  ),
  /** Upper bound of one partition's batch (bytes). */
  PROJECTOR_MAX_BATCH_BYTES: doc(
    envField.int(64 * 1024).default(PROJECTOR_BATCH_DEFAULTS.maxBatchBytes),
    "upper bound of one partition's batch, bytes (kafkajs `maxBytesPerPartition`)",
  ),
  LOG_LEVEL: logLevel('warn'),
  LOG_FORMAT: doc(
    z.enum(['auto', 'json', 'pretty']).default('auto'),
    '`auto`: one pretty line per log line on a terminal, JSON otherwise; `json` or `pretty` force one',
  ),
  /** Schema of the live indexer's checkpoint (default PROJECTION_SCHEMA). */
  INDEXER_SCHEMA: doc(
    envField.identifier().optional(),
    "schema holding the live indexer's checkpoint (`status`, `reindex`, `republish`)",
    '`PROJECTION_SCHEMA`',
  ),
  /** `dev`: prefix of the demo's topics and consumer groups. */
  DEV_KAFKA_PREFIX: doc(
    envField.identifier().default('dev'),
    "prefix of the demo's topics and consumer groups (two demos on one broker)",
  ),
  /** `dev`: the reader's port (`--port` wins). */
  PORT: doc(envField.port().default(8080), 'listen port'),
  /** `dev`: admin URL that may create the database and roles. */
  DATABASE_ADMIN_URL: doc(
    z.string().min(1).default('postgres://postgres@127.0.0.1:5432/postgres'),
    'admin URL that may create the database and its roles',
  ),
  /** `dev`: the database it creates. */
  DATABASE_NAME: doc(z.string().min(1).default('vault_yield_dev'), 'the demo database'),
});
/** What the operator commands that build projections read (rebuild, verify). */
export const buildEnvSchema = opsEnvSchema.pick({
  DATABASE_URL: true,
  MIGRATE_DATABASE_URL: true,
  WRITER_ROLE: true,
  KAFKA_BROKERS: true,
  KAFKA_SASL_MECHANISM: true,
  KAFKA_SASL_USERNAME: true,
  KAFKA_SASL_PASSWORD: true,
  KAFKA_SSL: true,
  KAFKA_SSL_CA_FILE: true,
  KAFKA_SSL_CERT_FILE: true,
  KAFKA_SSL_KEY_FILE: true,
  KAFKA_SASL_ALLOW_PLAINTEXT: true,
  KAFKA_TOPIC: true,
  VIEWS_SCHEMA: true,
  PROJECTION_SCHEMA: true,
  CONSUMER_GROUP: true,
  READER_ROLE: true,
  SCREEN_TOPIC: true,
  CATALOGUE_TOPIC: true,
  MIN_DAILY_RETURNS: true,
  PROJECTOR_CONCURRENCY: true,
  PG_POOL_MAX: true,
  PROJECTOR_MAX_BATCH_BYTES: true,
  LOG_LEVEL: true,
  LOG_FORMAT: true,
});
/**
 * The URL of the commands that create, alter or drop schemas (migrate, rebuild, reindex): the
 * migrator's, `MIGRATE_DATABASE_URL`, else `DATABASE_URL` (a single-role setup).
 */
export const ddlUrl = (env: { DATABASE_URL: string; MIGRATE_DATABASE_URL?: string | undefined }): string =>
  env.MIGRATE_DATABASE_URL ?? env.DATABASE_URL;
/** LOG_LEVEL of the commands that log at `info` by default (migrate, dead-letters, dev). */
export const infoLogLevel = { LOG_LEVEL: logLevel('info') };
/** The Kafka security variables, picked from the ops schema. */
export const kafkaSecurityPick = {
  KAFKA_SASL_MECHANISM: true,
  KAFKA_SASL_USERNAME: true,
  KAFKA_SASL_PASSWORD: true,
  KAFKA_SSL: true,
  KAFKA_SSL_CA_FILE: true,
  KAFKA_SSL_CERT_FILE: true,
  KAFKA_SSL_KEY_FILE: true,
  KAFKA_SASL_ALLOW_PLAINTEXT: true,
} as const;
export type OpsEnv = z.output<typeof buildEnvSchema>;

/** Logs go to stderr: stdout carries the command's result (text or --json). */
export function cliLogger(name: string, level: OpsEnv['LOG_LEVEL'], format?: OpsEnv['LOG_FORMAT']): Logger {
  return createLogger({ name, level, destination: process.stderr, ...(format ? { format } : {}) });
}

/** A time-based name suffix: sortable, short, valid in identifiers and group names. */
export function stamp(d = new Date()): string {
  return d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** Parses durations such as 90s, 15m, 24h, 7d, or plain milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) throw usageError(`invalid duration: ${text} (expected e.g. 30s, 15m, 24h, 7d)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? 'ms'] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

/** An error main.ts reports as a usage error: its message on stderr, exit 2, no stack trace. */
export function usageError(message: string): TypeError {
  return Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_VALUE' });
}

/**
 * An error main.ts reports as a failure: `vault-yield <command>: <message>` on stderr, exit 1, no
 * stack trace. Its message names the cause and the cure (what to check, what to run).
 */
export class CommandFailure extends Error {
  override name = 'CommandFailure';
}

/** A failure (exit 1) whose message names its cause and its cure (`cause`: the error, for --debug). */
export const failure = (message: string, cause?: unknown): CommandFailure =>
  new CommandFailure(message, cause === undefined ? undefined : { cause });

/** Validates an option value with a zod schema; a bad one is a usage error (exit 2), not a crash. */
export function optionValue<T>(option: string, schema: z.ZodType<T>, value: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw usageError(`--${option} ${value}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
}
