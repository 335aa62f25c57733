import { z } from 'zod';
import { shownValue } from '../redact/index.js';
import { type KafkaSecurityEnv, kafkaSecurityIssues, postgresTlsIssue } from '../security/index.js';
import { doc } from './doc.js';

/** Raised when the environment fails its schema; the message names every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type Env = Record<string, string | undefined>;

/**
 * Validates `env` against a zod object schema whose keys are environment variable names.
 * Empty strings count as unset, so `FOO=` falls back to the default instead of failing a parse.
 */
export function createConfig<S extends z.ZodObject>(schema: S, env: Env = process.env): z.infer<S> {
  const cleaned: Env = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') cleaned[key] = value.trim();
  }
  // Kafka's security variables are checked against each other when the schema has them.
  const checked =
    'KAFKA_SASL_MECHANISM' in schema.shape
      ? schema.superRefine((data, ctx) => {
          for (const issue of kafkaSecurityIssues(data as KafkaSecurityEnv)) {
            ctx.addIssue({ code: 'custom', path: [issue.path], message: issue.message });
          }
        })
      : schema;
  const parsed = checked.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '(env)');
      const got = cleaned[key];
      // A secret's value is never echoed: hidden whole by its name, a URL's credentials and key redacted.
      const shown = got === undefined ? '' : JSON.stringify(shownValue(key, got));
      return `  ${key}: ${issue.message}${got === undefined ? ' (unset)' : ` (got ${shown})`}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/**
 * `DATABASE_DIRECT_URL` is required with `DATABASE_POOLING=transaction` when a service keeps a
 * session of its own (`why`: what it holds there, for the error): a transaction-mode pooler
 * does not keep one. Throws a ConfigError naming the variable, as a schema failure does.
 */
export function requireDirectUrl(
  e: { DATABASE_POOLING: 'session' | 'transaction'; DATABASE_DIRECT_URL?: string | undefined },
  why: string,
): void {
  if (e.DATABASE_POOLING === 'transaction' && !e.DATABASE_DIRECT_URL)
    throw new ConfigError(
      `invalid configuration:\n  DATABASE_DIRECT_URL: required with DATABASE_POOLING=transaction (${why}, which a transaction-mode pooler does not keep) (unset)`,
    );
}

/**
 * An integer of a service's config shape (camelCase, parsed after the env: numbers already), in
 * [min, max]: every service's config schema uses this one.
 */
export const configInt = (min = 0, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);

/** Reusable env field parsers. */
export const envField = {
  /** Comma-separated list of host:port pairs. */
  brokers: () =>
    z
      .string()
      .transform((s) =>
        s
          .split(',')
          .map((b) => b.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.string().regex(/^[^\s:]+:\d{1,5}$/, 'expected host:port')).min(1)),
  /** A postgres:// URL; TLS through its `sslmode` and `sslrootcert` (CA file) parameters. */
  postgresUrl: () =>
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// or postgresql:// URL')
      .superRefine((url, ctx) => {
        const issue = postgresTlsIssue(url);
        if (issue) ctx.addIssue({ code: 'custom', message: issue });
      }),
  httpUrl: () => z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
  int: (min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max),
  port: () => z.coerce.number().int().min(0).max(65535),
  bool: () =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'expected true or false' })
      .transform((v) => v === 'true' || v === '1' || v === 'yes'),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  /** A Postgres identifier usable as a schema name. */
  identifier: () => z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'expected a lowercase SQL identifier'),
  topic: () => z.string().regex(/^[a-zA-Z0-9._-]{1,200}$/, 'expected a Kafka topic name'),
};

/** Settings every process shares. */
export const baseConfigSchema = z.object({
  LOG_LEVEL: doc(
    envField.logLevel().default('info'),
    "pino level (the cli's commands: `warn`, but `migrate`, `dead-letters` and `dev`: `info`)",
  ),
  /** `auto`: pretty lines on a terminal, JSON otherwise; `json` or `pretty` force one. */
  LOG_FORMAT: doc(
    z.enum(['auto', 'json', 'pretty']).default('auto'),
    '`auto`: one pretty line per log line on a terminal, JSON otherwise; `json` or `pretty` force one',
  ),
  NODE_ENV: doc(
    z.enum(['development', 'production', 'test']).default('development'),
    'the usual Node convention',
  ),
});
