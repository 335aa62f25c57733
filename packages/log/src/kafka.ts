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
}

let processSecurity: LogSecurity = {};

/**
 * Sets the SASL/TLS settings of every log client this process creates without settings of its
 * own (a process talks to one Kafka cluster). Each service's entry point sets it from its
 * validated config (`kafkaSecurity(env)`), so code that only knows the broker list connects
 * securely too.
 */
export function setDefaultLogSecurity(security: LogSecurity): void {
  processSecurity = { ...security };
}

/** The settings `setDefaultLogSecurity` set (e.g. to hand them to a worker thread). */
export function defaultLogSecurity(): LogSecurity {
  return { ...processSecurity };
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
  const { logger } = config;
  const { sasl, ssl } = config.sasl || config.ssl ? config : processSecurity;
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
    connectionTimeout: 10_000,
    ...(ssl ? { ssl: kafkaTlsOptions(ssl) } : {}),
    ...(sasl ? { sasl: { ...sasl } as SASLOptions } : {}),
  });
}
