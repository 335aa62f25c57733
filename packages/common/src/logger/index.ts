import { Writable } from 'node:stream';
import { type Logger, type LoggerOptions, pino } from 'pino';
import pinoPretty from 'pino-pretty';
import { redactText, redactValue } from '../redact/index.js';

export type { Logger } from 'pino';

/** How lines are written: `json` one object per line; `pretty` one colourised line; `auto` pretty on a TTY. */
export type LogFormat = 'auto' | 'json' | 'pretty';

export interface LoggerConfig {
  /**
   * Service name, written as `service` on every line; child loggers add a `component` (once a
   * line: a child's joins its parent's, `projector/follow-live`).
   */
  name: string;
  level?: LoggerOptions['level'];
  /** Where lines go; defaults to stdout. Tests pass a stream to capture lines. */
  destination?: pino.DestinationStream;
  /**
   * `auto` (default): pretty when the destination is a terminal (a person reads it), JSON
   * otherwise (a collector does). LOG_FORMAT in every service's config.
   */
  format?: LogFormat;
}

/** The pretty line: time, level, service[/component], message, then the other fields on the same line. */
function prettyStream(destination: NodeJS.WritableStream, colorize: boolean) {
  return pinoPretty({
    destination,
    colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service,component',
    messageFormat: '{service}{if component}/{component}{end}: {msg}',
    sync: true,
  });
}

/**
 * Every line on its way out with the URLs in it redacted (messages, child bindings, error stacks:
 * wherever a URL ends up); fields named like a secret are hidden before (formatters.log).
 */
function redacting(out: NodeJS.WritableStream): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _enc, cb) {
      const text = redactText(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      // A destination may be any object with `write` (pino's DestinationStream): only a stream
      // that says `false` has a 'drain' to wait for.
      if (out.write(text) !== false || typeof out.once !== 'function') cb();
      else out.once('drain', () => cb());
    },
  });
}

/** A `component` binding as pino writes it into a logger's bindings (its chindings). */
const COMPONENT = /,"component":("(?:[^"\\]|\\.)*")/g;

/**
 * A child's component joins its parent's (`projector/follow-live`): pino appends a child's
 * bindings to its parent's, so a line would carry `component` twice (a JSON object with one key
 * twice, whose reader keeps either).
 */
function joinComponents(child: Logger): void {
  const bindings = child as unknown as Record<symbol, string>;
  const chindings = bindings[pino.symbols.chindingsSym] ?? '';
  const parts = [...chindings.matchAll(COMPONENT)].map((m) => JSON.parse(m[1]!) as string);
  if (parts.length < 2) return;
  bindings[pino.symbols.chindingsSym] =
    `${chindings.replace(COMPONENT, '')},"component":${JSON.stringify(parts.join('/'))}`;
}

/**
 * pino logger shared by every process: one line per event, ISO time in JSON. Every line passes
 * through the redaction of packages/common/src/redact: passwords in URLs, RPC keys in a URL's path or
 * query, and fields named like a secret never reach the output.
 */
export function createLogger({ name, level = 'info', destination, format = 'auto' }: LoggerConfig): Logger {
  const out = (destination ?? process.stdout) as NodeJS.WritableStream & { isTTY?: boolean };
  const tty = out.isTTY === true;
  const options: LoggerOptions = {
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label) => ({ level: label }),
      log: (obj) => redactValue(obj),
    },
    serializers: { err: (err: Error) => redactValue(pino.stdSerializers.err(err)) },
    onChild: joinComponents,
  };
  const sink = redacting(out);
  const pretty = format === 'pretty' || (format === 'auto' && tty);
  return pino(options, pretty ? prettyStream(sink, tty) : sink);
}
