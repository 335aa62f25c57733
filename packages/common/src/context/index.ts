import { collectDefaultMetrics, Registry } from 'prom-client';
import { createLogger, type Logger, type LoggerConfig } from '../logger/index.js';
import { type KafkaSecurity, type KafkaSecurityEnv, kafkaSecurity } from '../security/index.js';
import { onShutdown } from '../shutdown/index.js';

/**
 * How the process reaches Kafka: the brokers, their SASL/TLS and the connect budget — spread into
 * every log client's config (`createLogAdmin({ ...ctx.kafka, clientId })`), so no client depends on
 * another having been created first.
 */
export interface KafkaConnection extends KafkaSecurity {
  brokers: readonly string[];
  /**
   * A one-shot process's wait for a broker to answer before it fails (ms; null: none, the
   * clients' own retries — the services).
   */
  connectBudgetMs: number | null;
}

/**
 * What every factory of a process is handed first (Ponder's `Common`): built once in the
 * process's entry point from its validated config; nothing below it sets process-wide state.
 */
export interface Context<C = unknown> {
  /** The service's name: `service` on every log line. */
  readonly service: string;
  /** The process's validated configuration. */
  readonly config: C;
  /** The process's logger; a component takes `log.child({ component })`. */
  readonly log: Logger;
  /** The process's Prometheus registry (its default metrics in it unless asked otherwise). */
  readonly metrics: Registry;
  /** Runs `stop` once on SIGINT/SIGTERM, then exits (`onShutdown`). */
  shutdown(stop: () => Promise<void>): void;
  /** How this process reaches Kafka; null for one that does not. */
  readonly kafka: KafkaConnection | null;
}

export interface ContextOptions<C> {
  service: string;
  config: C;
  /** A logger of its own (a test's capture), or how to make one (`name` is the service's). */
  log?: Logger | Omit<LoggerConfig, 'name'>;
  /** A registry of its own; else a new one. */
  metrics?: Registry;
  /** The process's default metrics (`process_*`, `nodejs_*`) on a new registry (true unless set). */
  defaultMetrics?: boolean;
  kafka?: KafkaConnection | null;
}

const isLogger = (log: ContextOptions<unknown>['log']): log is Logger =>
  typeof (log as Logger | undefined)?.child === 'function';

/** The process's context: its logger, registry, shutdown hook and Kafka connection, made once. */
export function createContext<C>(options: ContextOptions<C>): Context<C> {
  const log = isLogger(options.log) ? options.log : createLogger({ name: options.service, ...options.log });
  let metrics = options.metrics;
  if (!metrics) {
    metrics = new Registry();
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: metrics });
  }
  return {
    service: options.service,
    config: options.config,
    log,
    metrics,
    shutdown: (stop) => onShutdown(log, stop),
    kafka: options.kafka ?? null,
  };
}

/**
 * The Kafka connection a validated env names (`KAFKA_BROKERS` and the SASL/TLS variables; reads
 * the CA, certificate and key files), or null without brokers.
 */
export function kafkaConnection(
  env: KafkaSecurityEnv & { KAFKA_BROKERS?: readonly string[] | undefined },
  connectBudgetMs: number | null = null,
): KafkaConnection | null {
  if (!env.KAFKA_BROKERS) return null;
  return { brokers: env.KAFKA_BROKERS, ...kafkaSecurity(env), connectBudgetMs };
}

/** The SASL/TLS of a Kafka connection (none without one: plaintext). */
export function securityOf(kafka: KafkaConnection | null | undefined): KafkaSecurity {
  if (!kafka) return {};
  const { sasl, ssl } = kafka;
  return { ...(sasl ? { sasl } : {}), ...(ssl !== undefined ? { ssl } : {}) };
}
