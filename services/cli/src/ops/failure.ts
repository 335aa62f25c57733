import { ConfigError, redactText } from '@vault-yield/common';
import { z } from 'zod';
import { CommandFailure } from './env.js';

/**
 * What an operator reads when a command fails: one line (its cause, and the cure where the cause
 * is known), redacted, and the exit code — 2 for a value or option refused, 1 for a failure.
 */
export interface Failure {
  exitCode: 1 | 2;
  message: string;
}

/** The variables a cure names: where each endpoint comes from. */
type Env = Readonly<Record<string, string | undefined>>;

/** Node's codes for an endpoint that does not answer (refused, unknown, unreachable, timed out). */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
]);

/** viem's errors for a node that did not answer (its answers with an error are other classes). */
const RPC_UNREACHABLE = new Set([
  'HttpRequestError',
  'WebSocketRequestError',
  'TimeoutError',
  'SocketClosedError',
]);

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  address?: unknown;
  hostname?: unknown;
  port?: unknown;
  /** pg's: a server's error (with its SQLSTATE in `code`). */
  severity?: unknown;
  message?: unknown;
  shortMessage?: unknown;
  details?: unknown;
  cause?: unknown;
  errors?: unknown;
}

const fields = (err: unknown): ErrorLike => (typeof err === 'object' && err !== null ? err : {});

/** The error and its causes, outermost first (a few levels: libraries wrap a little). */
function chain(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  for (let e: unknown = err; e && out.length < 6; e = fields(e).cause) out.push(fields(e));
  return out;
}

/** `scheme://host:port` of a URL (no userinfo, path or query), or null when it is no URL. */
export function endpointOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.host ? `${u.protocol}//${u.host}` : null;
  } catch {
    return null;
  }
}

/** One line of an error's own words: viem's short message and details, else its message. */
function textOf(err: ErrorLike): string {
  const short = typeof err.shortMessage === 'string' ? err.shortMessage.replace(/\.$/, '') : undefined;
  const details = typeof err.details === 'string' && err.details !== '' ? err.details : undefined;
  const text = short
    ? `${short}${details ? ` (${details})` : ''}`
    : typeof err.message === 'string' && err.message !== ''
      ? err.message
      : String(err.name ?? 'error');
  return oneLine(text);
}

/** An error's own words on one line (viem's short message and details, else its message). */
export const errorText = (err: unknown): string => textOf(fields(err));

/** Text on one line: its lines joined, blank ones dropped. */
const oneLine = (text: string): string =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join('; ');

/** An endpoint a connection was for: its host, and its port when known. */
interface Endpoint {
  host: string;
  port?: string;
}

const shownEndpoint = (e: Endpoint): string => (e.port ? `${e.host}:${e.port}` : e.host);

/**
 * A connection Node could not make: its code and endpoint, from the error or the first of an
 * AggregateError's (a host with several addresses).
 */
function unreachable(err: unknown): { code: string; endpoint: Endpoint | null } | null {
  for (const e of chain(err)) {
    const inner = Array.isArray(e.errors) && e.errors.length > 0 ? fields(e.errors[0]) : e;
    const code =
      typeof e.code === 'string' ? e.code : typeof inner.code === 'string' ? inner.code : undefined;
    if (!code || !UNREACHABLE.has(code)) continue;
    const host =
      typeof inner.address === 'string'
        ? inner.address
        : typeof inner.hostname === 'string'
          ? inner.hostname
          : undefined;
    const port =
      typeof inner.port === 'number' || typeof inner.port === 'string' ? String(inner.port) : undefined;
    return { code, endpoint: host ? { host, ...(port ? { port } : {}) } : null };
  }
  return null;
}

/** The host and port of a URL (`defaultPort` when it names none), or null when it is no URL. */
function urlEndpoint(url: string | undefined, defaultPort: string): Endpoint | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.hostname ? { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port || defaultPort } : null;
  } catch {
    return null;
  }
}

const loopback = (host: string): boolean => host === 'localhost' || host.startsWith('127.') || host === '::1';

/** Whether a failed connection's endpoint is the one a URL names (localhost resolves to loopback). */
function sameEndpoint(failed: Endpoint, named: Endpoint | null): boolean {
  if (named === null) return false;
  const host = failed.host === named.host || (loopback(failed.host) && loopback(named.host));
  return host && (failed.port === undefined || failed.port === named.port);
}

/** pg's words for a connection that timed out or was cut before the database answered. */
const PG_NO_ANSWER = /^Connection terminated (due to connection timeout|unexpectedly)|^timeout expired/;

/** The variable naming the database a failed connection was for (any set one when unknown). */
function databaseVariable(env: Env, failed: Endpoint | null): string | undefined {
  const names = ['DATABASE_URL', 'MIGRATE_DATABASE_URL', 'DATABASE_ADMIN_URL'];
  if (failed === null) return names.find((n) => env[n]);
  return names.find((n) => sameEndpoint(failed, urlEndpoint(env[n], '5432')));
}

function rpcFailure(err: unknown, env: Env): string | null {
  const links = chain(err);
  const viem = links.find((e) => typeof e.name === 'string' && RPC_UNREACHABLE.has(e.name));
  if (!viem) return null;
  const rpc = endpointOf(env.RPC_URL);
  // The root cause names what failed below fetch (`connect ECONNREFUSED …`, `bad port`).
  const root = links.at(-1)!;
  const why = textOf(viem);
  const rootText = root === viem ? '' : textOf(root);
  return (
    `the RPC node does not answer (${why}${rootText && !why.includes(rootText) ? `: ${rootText}` : ''}): is the node up? ` +
    `RPC_URL points at ${rpc ?? 'an unparsable URL'}`
  );
}

function kafkaFailure(err: unknown, env: Env): string | null {
  const links = chain(err);
  const budget = links.find((e) => e.name === 'BrokersUnansweredError');
  if (budget) {
    const cause = budget.cause === undefined ? null : fields(budget.cause);
    const waited = env.KAFKA_CONNECT_BUDGET_MS ?? '5000';
    return (
      `the Kafka broker does not answer within KAFKA_CONNECT_BUDGET_MS=${waited} (${cause ? textOf(cause) : textOf(budget)}): ` +
      `is Kafka up? KAFKA_BROKERS lists ${env.KAFKA_BROKERS ?? '(unset)'} (a slow link: raise KAFKA_CONNECT_BUDGET_MS)`
    );
  }
  if (!links.some((e) => typeof e.name === 'string' && e.name.startsWith('KafkaJS'))) return null;
  const text = links.map((e) => (typeof e.message === 'string' ? e.message : '')).join(' ');
  if (/does not host this topic-partition|UNKNOWN_TOPIC/i.test(text))
    return `a topic does not exist on the broker (${textOf(links[0]!)}): KAFKA_TOPIC (or --topic) names a topic KAFKA_BROKERS ${env.KAFKA_BROKERS ?? ''} does not hold`;
  if (/connect|ECONNREFUSED|ENOTFOUND|timed? ?out|broker/i.test(text))
    return `the Kafka broker does not answer (${textOf(links[0]!)}): is Kafka up? KAFKA_BROKERS lists ${env.KAFKA_BROKERS ?? '(unset)'}`;
  return null;
}

/**
 * Postgres answered with an error an operator cures by a setting (SQLSTATE, in pg's `code`): a
 * database or schema that is not there, a login refused.
 */
function postgresFailure(err: unknown, env: Env): string | null {
  const e = chain(err).find(
    (x) => typeof x.code === 'string' && /^[0-9A-Z]{5}$/.test(x.code) && x.severity !== undefined,
  );
  if (!e) return null;
  const variable = databaseVariable(env, null) ?? 'DATABASE_URL';
  const text = textOf(e);
  switch (e.code) {
    case '3D000':
      return `${text}: ${variable} names a database that does not exist on that server (create it, or fix the URL)`;
    case '28P01':
    case '28000':
      return `${text}: check the user and password of ${variable}`;
    case '3F000':
    case '42P01':
      return (
        `${text}: the schema is not migrated (\`vault-yield migrate\`) or not the one meant ` +
        '(PROJECTION_SCHEMA, INDEXER_SCHEMA, VIEWS_SCHEMA name them)'
      );
    default:
      return null;
  }
}

function connectionFailure(err: unknown, env: Env): string | null {
  const lost = unreachable(err);
  const pgTimeout = chain(err).some((e) => typeof e.message === 'string' && PG_NO_ANSWER.test(e.message));
  if (!lost && !pgTimeout) return null;
  const failed = lost?.endpoint ?? null;
  const what = lost ? `${lost.code}${failed ? ` ${shownEndpoint(failed)}` : ''}` : textOf(fields(err));
  const variable = databaseVariable(env, failed);
  const db = variable ? urlEndpoint(env[variable], '5432') : null;
  if (variable && db)
    return `Postgres does not answer (${what}): is Postgres up? ${variable} points at ${shownEndpoint(db)}`;
  if (failed && sameEndpoint(failed, urlEndpoint(env.RPC_URL, '')))
    return `the RPC node does not answer (${what}): is the node up? RPC_URL points at ${endpointOf(env.RPC_URL)}`;
  return `cannot connect (${what}): is the service at ${failed ? shownEndpoint(failed) : 'that address'} up?`;
}

/**
 * The line and exit code of an error a command threw. Known causes get their cure: a value
 * refused (exit 2), a database, RPC node or broker that does not answer, a missing topic, a
 * database or schema that is not there, a login refused; any
 * other error is its own words on one line, pointing at `--debug` for the stack. Redacted whole:
 * libraries put URLs (with keys) in their messages and details.
 */
export function describeFailure(err: unknown, env: Env): Failure {
  const fail = (exitCode: 1 | 2, message: string): Failure => ({ exitCode, message: redactText(message) });
  // A value refused (its list of variables keeps one line each, as every service prints it).
  if (err instanceof ConfigError || (err instanceof TypeError && 'code' in err)) return fail(2, err.message);
  // A value some schema refused without naming its option.
  if (err instanceof z.ZodError)
    return fail(2, err.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; '));
  if (err instanceof CommandFailure) return fail(1, oneLine(err.message));
  // The indexer's refusals (republish): their messages say what is refused and why.
  if (fields(err).name === 'RepublishError') return fail(1, textOf(fields(err)));
  const known =
    rpcFailure(err, env) ??
    kafkaFailure(err, env) ??
    connectionFailure(err, env) ??
    postgresFailure(err, env);
  if (known) return fail(1, known);
  const e = fields(err);
  const name = typeof e.name === 'string' && e.name !== 'Error' ? `${e.name}: ` : '';
  return fail(1, `${name}${textOf(e)} (run again with --debug for the stack)`);
}
