import { type Logger, type LoggerOptions, pino } from 'pino';

export type { Logger } from 'pino';

export interface LoggerConfig {
  /** Service name, written as `service` on every line. */
  name: string;
  level?: LoggerOptions['level'];
  /** Where lines go; defaults to stdout. Tests pass a stream to capture lines. */
  destination?: pino.DestinationStream;
}

/** pino JSON logger shared by every process: one line per event, ISO time, no pretty printing. */
export function createLogger({ name, level = 'info', destination }: LoggerConfig): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: pino.stdSerializers.err },
  };
  return destination ? pino(options, destination) : pino(options);
}
