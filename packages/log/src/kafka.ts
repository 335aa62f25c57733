import type { ConnectionOptions } from 'node:tls';
import type { KafkaSecurity, Logger } from '@vault-yield/common';
import { Kafka, type LogEntry, logLevel, type SASLOptions } from 'kafkajs';

/** SASL and TLS of the connections to the brokers (see `kafkaSecurity` in @vault-yield/common). */
export type LogSecurity = KafkaSecurity;

/** What every log client needs: where the brokers are, who we are, where kafkajs logs go. */
export interface LogClientConfig extends LogSecurity {
  brokers: readonly string[];
  clientId: string;
  /** kafkajs lines are forwarded here (warn and above unless `kafkaLogLevel` says otherwise). */
  logger?: Logger;
  kafkaLogLevel?: 'error' | 'warn' | 'info' | 'debug';
  /**
   * Every kafkajs line at debug: for a one-shot command (the CLI), which reports a failure itself
   * in one line — the client's retries before it (a broker that does not answer: an error line
   * per attempt) are its debug detail, shown with LOG_LEVEL=debug.
   */
  kafkaLinesAtDebug?: boolean;
  /** Retries of a failed request (8 unless set; 0 fails at once, e.g. to probe credentials). */
  retries?: number;
  /** How long one connection attempt to a broker may take (10 s unless set). */
  connectionTimeoutMs?: number;
  /**
   * A one-shot process's budget for reaching the brokers (ms; null or unset: none, the client's
   * own retries alone — the services, `dev`). See `brokersAnswer`.
   */
  connectBudgetMs?: number | null;
}

const levels = { error: logLevel.ERROR, warn: logLevel.WARN, info: logLevel.INFO, debug: logLevel.DEBUG };

/**
 * Answers a broker gives while it is still starting (its group coordinator loading the offsets
 * topic, a partition without a leader yet): kafkajs logs them as errors and retries, and the retry
 * succeeds — on a healthy start they are expected, so they are logged at debug. Should the retries
 * run out, the failure itself still surfaces from the call, as an error.
 */
export const EXPECTED_AT_START = [
  'The group coordinator is not available',
  "The coordinator is loading and hence can't process requests",
  'There is no leader for this topic-partition',
  'This server does not host this topic-partition',
];
const expectedAtStart = (fields: Record<string, unknown>, message: string) =>
  EXPECTED_AT_START.some((e) => String(fields.error ?? '').startsWith(e) || message.startsWith(e));

/**
 * kafkajs' `ssl` option from the settings: `true` (system CAs), or the CA to trust and, for
 * brokers that require a client certificate (mTLS), the certificate and its key.
 */
export function kafkaTlsOptions(ssl: NonNullable<LogSecurity['ssl']>): true | ConnectionOptions {
  if (ssl === true) return true;
  if (ssl === false) return {};
  return {
    ...(ssl.ca ? { ca: ssl.ca } : {}),
    ...(ssl.cert && ssl.key ? { cert: ssl.cert, key: ssl.key } : {}),
  };
}

/** Builds the kafkajs client, its log lines routed into pino. Internal to this package. */
export function kafkaClient(config: LogClientConfig): Kafka {
  // SASL/TLS only as the config says (a process's context hands them to every client);
  // nothing configured: plaintext (a test or dev broker).
  const { logger, sasl, ssl } = config;
  return new Kafka({
    clientId: config.clientId,
    brokers: [...config.brokers],
    logLevel: logger ? levels[config.kafkaLogLevel ?? 'warn'] : logLevel.NOTHING,
    logCreator:
      () =>
      ({ namespace, level, log }: LogEntry) => {
        if (!logger) return;
        const { message, ...extra } = log;
        // Our publishers retry a bounded number of times on purpose: a send that still fails is
        // not checkpointed and is republished later (duplicates are harmless), so EoS holds.
        if (message.startsWith('Limiting retries for the idempotent producer')) return;
        const fields = { kafka: namespace, ...extra };
        if (config.kafkaLinesAtDebug || expectedAtStart(fields, message)) logger.debug(fields, message);
        else if (level === logLevel.ERROR) logger.error(fields, message);
        else if (level === logLevel.WARN) logger.warn(fields, message);
        else if (level === logLevel.INFO) logger.info(fields, message);
        else logger.debug(fields, message);
      },
    // Every field set: under NODE_ENV=test kafkajs swaps its defaults for a 1 s cap on the whole
    // backoff, so a test would give up on a leader election that production rides through.
    retry: {
      initialRetryTime: 200,
      maxRetryTime: 30_000,
      factor: 0.2,
      multiplier: 2,
      retries: config.retries ?? 8,
    },
    // kafkajs' 1 s is short for a TLS or SASL handshake to a busy broker.
    connectionTimeout: config.connectionTimeoutMs ?? 10_000,
    ...(ssl ? { ssl: kafkaTlsOptions(ssl) } : {}),
    ...(sasl ? { sasl: { ...sasl } as SASLOptions } : {}),
  });
}

/**
 * A one-shot process's budget for reaching the brokers (`connectBudgetMs`; the CLI's
 * KAFKA_CONNECT_BUDGET_MS). With a budget, the first client a process creates for a broker list
 * first checks, within the budget, that one of them answers — a broker that does not fails there
 * in seconds, instead of after every retry of the client's schedule (≈ 40 s on a closed port).
 * Once one answered, the clients keep their full retries for what follows (a leader election in a
 * long fold). Keyed by the list and the budget.
 */
const probes = new Map<string, Promise<void>>();

/** No broker of the list answered within the connect budget. */
export class BrokersUnansweredError extends Error {
  override name = 'BrokersUnansweredError';
  constructor(
    readonly brokers: readonly string[],
    readonly budgetMs: number,
    cause: unknown,
  ) {
    super(
      `no broker of ${brokers.join(',')} answered within ${budgetMs} ms (${cause instanceof Error ? cause.message : String(cause)})`,
      { cause },
    );
  }
}

/** kafkajs' words for a broker that cannot be reached (refused, unknown, unreachable, timed out, closed). */
const UNREACHED =
  /Connection (error|timeout)|Closed connection|ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|EAI_AGAIN/i;

function unreached(err: unknown): boolean {
  for (
    let e = err as { message?: unknown; cause?: unknown; originalError?: unknown } | undefined, i = 0;
    e && i < 6;
    i++
  ) {
    if (typeof e.message === 'string' && UNREACHED.test(e.message)) return true;
    e = (e.originalError ?? e.cause) as typeof e;
  }
  return false;
}

async function probe(config: LogClientConfig, budgetMs: number): Promise<void> {
  const deadline = Date.now() + budgetMs;
  let pause = 100;
  for (;;) {
    const remaining = deadline - Date.now();
    // One attempt, no retries, silent: this loop is the retry, the caller reports the failure.
    const admin = kafkaClient({
      ...config,
      logger: undefined,
      retries: 0,
      connectionTimeoutMs: Math.max(200, Math.min(remaining, 3_000)),
    }).admin();
    try {
      await admin.connect();
      await admin.disconnect();
      return;
    } catch (err) {
      await admin.disconnect().catch(() => {});
      // Anything but an unreached broker (a refused login, a TLS mismatch) is the clients' to report.
      if (!unreached(err)) return;
      if (Date.now() + pause >= deadline) throw new BrokersUnansweredError(config.brokers, budgetMs, err);
    }
    await new Promise((r) => setTimeout(r, pause));
    pause = Math.min(pause * 2, 1_000);
  }
}

/**
 * Within the config's connect budget (`connectBudgetMs`), resolves once a broker of the list
 * answered — once per list and process — or throws `BrokersUnansweredError`; without a budget, at once.
 */
export function brokersAnswer(config: LogClientConfig): Promise<void> {
  const budget = config.connectBudgetMs;
  if (budget === null || budget === undefined) return Promise.resolve();
  const key = `${[...config.brokers].sort().join(',')}@${budget}`;
  let p = probes.get(key);
  if (!p) {
    p = probe(config, budget);
    probes.set(key, p);
    p.catch(() => probes.delete(key));
  }
  return p;
}
