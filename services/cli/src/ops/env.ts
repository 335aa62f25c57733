import { createLogger, envField, kafkaSecurityShape, type Logger } from '@vault-yield/common';
import { DEFAULT_MIN_DAILY_RETURNS } from '@vault-yield/domain';
import { PROJECTOR_BATCH_DEFAULTS } from '@vault-yield/projector';
import { z } from 'zod';

/** Environment shared by the operator commands (rebuild, verify, reindex, status). */
export const opsEnvSchema = z.object({
  DATABASE_URL: envField.postgresUrl(),
  KAFKA_BROKERS: envField.brokers(),
  ...kafkaSecurityShape,
  KAFKA_TOPIC: envField.topic().default('vault-records'),
  /** Schema of the views the reader reads; its target is the live projection schema. */
  VIEWS_SCHEMA: envField.identifier().default('vault_yield_api'),
  /** The projection schema that is live before any switch (and the indexer's schema by default). */
  PROJECTION_SCHEMA: envField.identifier().default('vault_yield'),
  /** Group of the live projector (status, verify), when the live schema has no build record. */
  CONSUMER_GROUP: z.string().min(1).max(200).default('vault-yield-projector'),
  READER_ROLE: envField.identifier().optional(),
  SCREEN_TOPIC: envField.topic().default('screen-results'),
  CATALOGUE_TOPIC: envField.topic().default('strategy-catalogue'),
  MIN_DAILY_RETURNS: envField.int(1, 10_000).default(DEFAULT_MIN_DAILY_RETURNS),
  /** Partitions folded at once by the build's projector, and its Postgres pool. */
  PROJECTOR_CONCURRENCY: envField.int(1, 64).default(PROJECTOR_BATCH_DEFAULTS.concurrency),
  PG_POOL_MAX: envField.int(1, 100).default(6),
  /** Upper bound of one partition's batch (bytes). */
  PROJECTOR_MAX_BATCH_BYTES: envField.int(64 * 1024).default(PROJECTOR_BATCH_DEFAULTS.maxBatchBytes),
  LOG_LEVEL: envField.logLevel().default('warn'),
});
export type OpsEnv = z.output<typeof opsEnvSchema>;

/** Logs go to stderr: stdout carries the command's result (text or --json). */
export function cliLogger(name: string, level: OpsEnv['LOG_LEVEL']): Logger {
  return createLogger({ name, level, destination: process.stderr });
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

/** Validates an option value with a zod schema; a bad one is a usage error (exit 2), not a crash. */
export function optionValue<T>(option: string, schema: z.ZodType<T>, value: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw usageError(`--${option} ${value}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
}
