import type { z } from 'zod';

/**
 * The URL of the commands that create, alter or drop schemas (migrate, rebuild, reindex): the
 * migrator's, `MIGRATE_DATABASE_URL`, else `DATABASE_URL` (a single-role setup).
 */
export const ddlUrl = (env: { DATABASE_URL: string; MIGRATE_DATABASE_URL?: string | undefined }): string =>
  env.MIGRATE_DATABASE_URL ?? env.DATABASE_URL;

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
