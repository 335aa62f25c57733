import { z } from 'zod';

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
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '(env)');
      const got = cleaned[key];
      return `  ${key}: ${issue.message}${got === undefined ? ' (unset)' : ` (got ${JSON.stringify(got)})`}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

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
  postgresUrl: () => z.string().regex(/^postgres(ql)?:\/\//, 'expected a postgres:// or postgresql:// URL'),
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
  LOG_LEVEL: envField.logLevel().default('info'),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
});
