import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ErrorCode } from './schemas.js';

/** An error with its HTTP status and API code; thrown anywhere, rendered by the error handler. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ApiError(400, 'invalid_request', message);
export const notFound = (message: string) => new ApiError(404, 'not_found', message);

/** The one error payload: `{ "error": { "code", "message" } }`. */
export function errorResponse(
  c: Context,
  status: ContentfulStatusCode,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): Response {
  c.header('Cache-Control', 'no-store');
  for (const [k, v] of Object.entries(headers)) c.header(k, v);
  return c.json({ error: { code, message } }, status);
}

// Errors that mean "Postgres is not answering", not "the query is wrong": connection refused or
// reset, the pool timing out, admin shutdown, a cancelled statement (statement_timeout).
const UNAVAILABLE_NODE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const UNAVAILABLE_SQLSTATE = /^(08|53|57)/; // connection exception, insufficient resources, operator intervention

export function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_NODE.has(code) || UNAVAILABLE_SQLSTATE.test(code)))
    return true;
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|Client has encountered a connection error/i.test(
    err.message,
  );
}
