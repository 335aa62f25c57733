import type { Logger } from '@vault-yield/common';
import { Kafka, type LogEntry, logLevel } from 'kafkajs';

/** What every log client needs: where the brokers are, who we are, where kafkajs logs go. */
export interface LogClientConfig {
  brokers: readonly string[];
  clientId: string;
  /** kafkajs lines are forwarded here (warn and above unless `kafkaLogLevel` says otherwise). */
  logger?: Logger;
  kafkaLogLevel?: 'error' | 'warn' | 'info' | 'debug';
}

const levels = { error: logLevel.ERROR, warn: logLevel.WARN, info: logLevel.INFO, debug: logLevel.DEBUG };

/** Builds the kafkajs client, its log lines routed into pino. Internal to this package. */
export function kafkaClient(config: LogClientConfig): Kafka {
  const { logger } = config;
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
        if (level === logLevel.ERROR) logger.error(fields, message);
        else if (level === logLevel.WARN) logger.warn(fields, message);
        else if (level === logLevel.INFO) logger.info(fields, message);
        else logger.debug(fields, message);
      },
    retry: { initialRetryTime: 200, retries: 8 },
  });
}
