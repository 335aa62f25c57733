import type { ReaderApi } from '@vault-yield/reader';
import { type ClientRequestOptions, type ClientResponse, hc, type InferResponseType } from 'hono/client';

/**
 * Typed client of the read API. Its types come from the reader's route declarations (paths, path
 * and query parameters, response bodies per status): a change there is a type error here. Runs in
 * Node ≥ 20 and in browsers (the dashboard uses it).
 *
 * ```ts
 * const api = createClient('http://127.0.0.1:8080');
 * const res = await api.v1.vaults.$get({ query: { limit: '10' } });
 * const vaults = await res.json(); // VaultSummary[] (or the error body: check res.ok first)
 * ```
 */
export function createClient(baseUrl: string, options?: ClientRequestOptions) {
  return hc<ReaderApi>(baseUrl, options);
}
export type ReaderClient = ReturnType<typeof createClient>;
type Api = ReaderClient['v1'];

/** The cursor of the next page (`X-Next-Cursor`), or undefined on the last page. */
export const nextCursor = (res: Response | ClientResponse<unknown>): string | undefined =>
  res.headers.get('x-next-cursor') ?? undefined;

/** The body type a response declares for 200. */
export type OkBody<R> = R extends ClientResponse<infer T, 200, infer _F> ? T : never;

/** The body of a 200 answer, or an ApiError with the API's message (`{ error: { code, message } }`). */
export async function ok<R extends ClientResponse<unknown, number, string>>(res: R): Promise<OkBody<R>> {
  if (res.status === 200) return (await res.json()) as OkBody<R>;
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.message) message = `${res.status} ${body.error.code}: ${body.error.message}`;
  } catch {}
  throw new ApiError(res.status, message);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Ok<T> = InferResponseType<T, 200>;
/** Response bodies, as the reader declares them. */
export type Snapshot = Ok<Api['vault'][':address']['snapshot']['$get']>;
export type EquityPoint = Ok<Api['vault'][':address']['equity']['$get']>[number];
export type LedgerRow = Ok<Api['vault'][':address']['events']['$get']>[number];
export type VaultSummary = Ok<Api['vaults']['$get']>[number];
export type Strategy = Ok<Api['strategies']['$get']>[number];
