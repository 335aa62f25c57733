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
    /** Fields of the error object beside code and message (`candidates` of an ambiguous vault). */
    readonly detail: ErrorDetail = {},
  ) {
    super(message);
  }
}

/** What an error may say beside its code and message. */
export interface ErrorDetail {
  /** `ambiguous_vault`: the ids of the vaults the bare address names, by ascending chain. */
  candidates?: string[];
}

export const badRequest = (message: string) => new ApiError(400, 'invalid_request', message);
export const notFound = (message: string) => new ApiError(404, 'not_found', message);
/** A bare address that is a vault on several chains: 409 naming each vault's id. */
export const ambiguousVault = (address: string, candidates: string[]) =>
  new ApiError(
    409,
    'ambiguous_vault',
    `${address} is a vault on several chains: name one by its id (${candidates.join(', ')})`,
    {},
    { candidates },
  );

/** The one error payload: `{ "error": { "code", "message" } }` (and `candidates` on a 409). */
export function errorResponse(
  c: Context,
  status: ContentfulStatusCode,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
  detail: ErrorDetail = {},
): Response {
  c.header('Cache-Control', 'no-store');
  for (const [k, v] of Object.entries(headers)) c.header(k, v);
  return c.json({ error: { code, message, ...detail } }, status);
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
