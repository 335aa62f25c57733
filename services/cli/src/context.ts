import {
  type Context,
  createConfig,
  createContext,
  type Env,
  type KafkaSecurity,
  type LogFormat,
} from '@vault-yield/common';
import type { z } from 'zod';

/** How a command logs: the name on its lines, and where they go. */
export interface CommandLog {
  /** `service` on every line (`cli` for migrate and dead-letters, else the command's). */
  name: string;
  /** Lines on stdout (the commands whose progress is their output); else stderr, stdout being the result. */
  stdout?: boolean;
  /** LOG_FORMAT as its env says (else `auto`). */
  format?: boolean;
}

/** A command's context: the process's (Ponder's `Common`), its config the command's pick of the env. */
export interface CliContext<E> extends Context<E> {
  /** A further pick of the cli's schema from the same environment (e.g. the topic variables set). */
  read<S extends z.ZodObject>(schema: S): z.output<S>;
}

/** What main.ts read of the process once, whatever the command. */
export interface ProcessSettings {
  /** The environment, read once. */
  env: Env;
  /** SASL/TLS of every Kafka client (KAFKA_SASL_* / KAFKA_SSL*, validated at start). */
  security: KafkaSecurity;
  /** KAFKA_CONNECT_BUDGET_MS (null: `dev`, or 0). */
  connectBudgetMs: number | null;
}

/**
 * The one reader of the cli's environment: a pick of its schema, validated (a ConfigError naming
 * every bad variable, `invalid configuration:`), empty values as unset.
 */
export const readEnv = <S extends z.ZodObject>(env: Env, schema: S): z.output<S> => createConfig(schema, env);

/** What a command declares of its context: its pick of the cli's schema and how it logs. */
export interface ContextSpec<S extends z.ZodObject> {
  env: S;
  log: CommandLog;
  /** The process's default metrics on its registry (a command that serves /metrics: audit). */
  defaultMetrics?: boolean;
}

/**
 * The context of a command, made when the command first asks for it (after its arguments are
 * checked: a usage error comes first, and `--dry-run` needs no brokers) and the same after.
 * Its config fails as a ConfigError naming every bad variable, as the schema says.
 */
export function commandContext<S extends z.ZodObject>(
  spec: ContextSpec<S>,
  process: ProcessSettings,
): () => CliContext<z.output<S>> {
  let made: CliContext<z.output<S>> | undefined;
  const read = <T extends z.ZodObject>(schema: T): z.output<T> => readEnv(process.env, schema);
  return () => {
    if (made) return made;
    const config = read(spec.env);
    const e = config as { LOG_LEVEL?: string; LOG_FORMAT?: LogFormat; KAFKA_BROKERS?: readonly string[] };
    const format = spec.log.format ? e.LOG_FORMAT : undefined;
    const ctx = createContext({
      service: spec.log.name,
      config,
      log: {
        ...(e.LOG_LEVEL ? { level: e.LOG_LEVEL } : {}),
        ...(spec.log.stdout ? {} : { destination: globalThis.process.stderr }),
        ...(format ? { format } : {}),
      },
      defaultMetrics: spec.defaultMetrics === true,
      kafka: e.KAFKA_BROKERS
        ? { brokers: e.KAFKA_BROKERS, ...process.security, connectBudgetMs: process.connectBudgetMs }
        : null,
    });
    made = { ...ctx, read };
    return made;
  };
}
