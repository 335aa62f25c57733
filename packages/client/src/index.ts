import { type RetryOptions, retryingFetch, type Sleep } from './retry.js';
import { openSubscription } from './stream.js';
import type {
  Chain,
  EquityPoint,
  ErrorBody,
  ErrorCode,
  Health,
  LedgerRow,
  LedgerType,
  Ready,
  Snapshot,
  Strategy,
  StreamHandlers,
  SubscribeOptions,
  Subscription,
  TxQuery,
  UniverseAsset,
  UniversePair,
  VaultId,
  VaultSummary,
} from './types.js';

export { RETRY_DEFAULTS, RETRY_STATUSES, type RetryOptions, retryAfterMs } from './retry.js';
export { createSseParser, type SseEvent } from './stream.js';
export * from './types.js';

/**
 * Typed client of the Vault Yield Service read API. Self-contained (no dependency, no import of
 * the service): the response types live in ./types.ts and the reader checks its schemas against
 * them. Runs in Node ≥ 20 and in browsers (the reader's dashboard uses it).
 *
 * ```ts
 * const api = createClient('http://127.0.0.1:8080');
 * const res = await api.v1.vaults.$get({ query: { limit: 10 } });
 * const vaults = await ok(res); // VaultSummary[], or throws ApiError with the API's message
 * for await (const row of items(api.v1.vault[':vault'].events, { param: { vault: 'eip155:8453:0x…' }, query: { type: 'deposit' } }))
 *   if (row.type === 'deposit') console.log(row.data.amount); // data typed by row.type
 * ```
 *
 * A 429 or 503 is retried after its `Retry-After`, a bounded number of times (`retry`).
 */

/** A time bound: Unix milliseconds, an ISO-8601 date / date-time with offset, or a Date. */
export type TimeBound = number | string | Date;

/** `GET /v1/vault/{vault}/events` query. Bounds are `[since, until)`. */
export interface EventsQuery {
  /** One type, several (repeated), or a comma-separated list; any of them matches. */
  type?: LedgerType | readonly LedgerType[] | `${LedgerType},${string}`;
  since?: TimeBound;
  until?: TimeBound;
  /** Rows per page, 1–500 (default 50). */
  limit?: number;
  /** The previous page's `X-Next-Cursor` (see `pages` / `items`). */
  cursor?: string;
}

/** `GET /v1/vault/{vault}/equity` query. Window `[from, to)`. */
export interface EquityQuery {
  from?: TimeBound;
  to?: TimeBound;
  /** Most points returned, 1–1000 (default 200). */
  points?: number;
}

/** `GET /v1/vaults` query. */
export interface VaultsQuery {
  owner?: string;
  /** Vaults of this chain only. */
  chainId?: number;
  /** Vaults per page, 1–500 (default 50). */
  limit?: number;
  cursor?: string;
}

/** Options of one request. */
export interface RequestOptions {
  /** Extra request headers (e.g. `If-None-Match`). */
  headers?: Record<string, string>;
  /** Aborts the request and any wait before a retry. */
  signal?: AbortSignal;
}

type ResponseFields = Omit<Response, 'ok' | 'status' | 'json'>;
/** A 200 answer: `json()` is the declared body. */
export interface OkResponse<T> extends ResponseFields {
  readonly ok: true;
  readonly status: 200;
  json(): Promise<T>;
}
/** A 304 answer to `If-None-Match` (no body). */
export interface NotModifiedResponse extends ResponseFields {
  readonly ok: false;
  readonly status: 304;
  json(): Promise<never>;
}
/** Any other answer: the API's one error body (a proxy in between may answer otherwise). */
export interface ErrorResponse extends ResponseFields {
  readonly ok: false;
  readonly status: number;
  json(): Promise<ErrorBody>;
}
/** What an operation resolves to: narrow on `ok` (or pass it to `ok()`). */
export type ApiResponse<T> = OkResponse<T> | NotModifiedResponse | ErrorResponse;

/** An operation whose arguments are required. */
export interface Get<A, T> {
  $get(args: A, options?: RequestOptions): Promise<ApiResponse<T>>;
}
/** An operation whose arguments may be left out. */
export interface GetOptional<A, T> {
  $get(args?: A, options?: RequestOptions): Promise<ApiResponse<T>>;
}

type NoArgs = Record<string, never>;
/** A vault's operations, named by `P`: `{ vault }` (its id `eip155:{chainId}:0x…` or a bare address). */
export interface VaultOperations<P> {
  snapshot: Get<P, Snapshot>;
  equity: Get<P & { query?: EquityQuery }, EquityPoint[]>;
  events: Get<P & { query?: EventsQuery }, LedgerRow[]>;
}

/**
 * The operations, by path, as `hc` (hono/client) would shape them:
 * `api.v1.vault[':vault'].snapshot.$get({ param: { vault: 'eip155:8453:0x…' } })`. A vault is named
 * by its id or by a bare address; a bare address that is a vault on several chains answers 409
 * `ambiguous_vault` (`ApiError.candidates` lists the ids).
 */
export interface ReaderClient {
  v1: {
    vault: {
      ':vault': VaultOperations<{ param: { vault: string } }>;
      /** @deprecated The same operations with the parameter named `address` (a vault id is accepted too): use `':vault'`. */
      ':address': VaultOperations<{ param: { address: string } }>;
    };
    tx: { ':hash': Get<{ param: { hash: string }; query?: TxQuery }, LedgerRow[]> };
    vaults: GetOptional<{ query?: VaultsQuery }, VaultSummary[]>;
    /** Every chain the deployment follows, with its head, indexer checkpoint and lags. */
    chains: GetOptional<NoArgs, Chain[]>;
    strategies: GetOptional<NoArgs, Strategy[]>;
    universe: GetOptional<NoArgs, UniverseAsset[]> & { pairs: GetOptional<NoArgs, UniversePair[]> };
  };
  health: GetOptional<NoArgs, Health>;
  ready: GetOptional<NoArgs, Ready>;
  /**
   * Follows the live stream of one vault (`GET /v1/vault/{vault}/stream`: a vault id, or a bare
   * address on one chain), of several (`GET /v1/stream?vault=…`, at most 100 ids or bare addresses,
   * a bare address following that address on every chain) or of every vault (`'*'`): the handlers get each
   * `ledger`, `snapshot` and `reset` event and the subscription's state; it reconnects by itself
   * with `Last-Event-ID` (no event missed or repeated) until `signal` aborts or `close()`.
   *
   * ```ts
   * const sub = api.subscribe(vault, { ledger: (row) => console.log(row.type), snapshot: (s) => draw(s.snapshot) }, { signal });
   * ```
   */
  subscribe(
    vaults: string | readonly string[] | '*',
    handlers: StreamHandlers,
    options?: SubscribeOptions,
  ): Subscription;
}

export interface ClientOptions {
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** Retries of 429 / 503 after `Retry-After` (default: 3 retries, waits up to 30 s); false: none. */
  retry?: RetryOptions | false;
  /** How to wait before a retry (tests pass a fake clock). */
  sleep?: Sleep;
}

type QueryValue = string | number | Date | readonly string[] | undefined;
type Args = { param?: Record<string, string>; query?: object };

/** `key=value` pairs: numbers as decimals, dates as Unix ms, arrays repeated, undefined left out. */
export function searchParams(query: object | undefined): URLSearchParams {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {}) as [string, QueryValue][]) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value])
      out.append(key, v instanceof Date ? String(v.getTime()) : String(v));
  }
  return out;
}

/** Creates the client for the reader at `baseUrl` (e.g. `http://127.0.0.1:8080`, a path prefix allowed). */
export function createClient(baseUrl: string, options: ClientOptions = {}): ReaderClient {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const send = retryingFetch(
    options.fetch ?? ((input, init) => fetch(input, init)),
    options.retry,
    options.sleep,
  );
  const op = (template: string) => ({
    $get(args?: Args, request: RequestOptions = {}) {
      const path = template.replace(/:(\w+)/g, (_, name: string) => {
        const value = args?.param?.[name];
        if (value === undefined) throw new TypeError(`missing path parameter ${name}`);
        return encodeURIComponent(value);
      });
      const search = searchParams(args?.query).toString();
      const url = new URL(`${path.slice(1)}${search ? `?${search}` : ''}`, base).href;
      const init: RequestInit = {
        method: 'GET',
        headers: { accept: 'application/json', ...options.headers, ...request.headers },
      };
      if (request.signal) init.signal = request.signal;
      return send(url, init);
    },
  });
  // Every operation is a GET whose typed answer is what the reader declares (checked there).
  return {
    v1: {
      vault: {
        ':vault': {
          snapshot: op('/v1/vault/:vault/snapshot'),
          equity: op('/v1/vault/:vault/equity'),
          events: op('/v1/vault/:vault/events'),
        },
        ':address': {
          snapshot: op('/v1/vault/:address/snapshot'),
          equity: op('/v1/vault/:address/equity'),
          events: op('/v1/vault/:address/events'),
        },
      },
      tx: { ':hash': op('/v1/tx/:hash') },
      vaults: op('/v1/vaults'),
      chains: op('/v1/chains'),
      strategies: op('/v1/strategies'),
      universe: { ...op('/v1/universe'), pairs: op('/v1/universe/pairs') },
    },
    health: op('/health'),
    ready: op('/ready'),
    subscribe(vaults: string | readonly string[], handlers: StreamHandlers, opts?: SubscribeOptions) {
      const path =
        typeof vaults === 'string' && vaults !== '*'
          ? `v1/vault/${encodeURIComponent(vaults)}/stream`
          : `v1/stream${typeof vaults === 'string' ? '' : `?${searchParams({ vault: vaults }).toString()}`}`;
      return openSubscription(
        {
          url: new URL(path, base).href,
          fetch: options.fetch ?? ((input, init) => fetch(input, init)),
          headers: { ...options.headers },
        },
        handlers,
        opts,
      );
    },
  } as unknown as ReaderClient;
}

/** The cursor of the next page (`X-Next-Cursor`), or undefined on the last page. */
export const nextCursor = (res: { headers: Headers }): string | undefined =>
  res.headers.get('x-next-cursor') ?? undefined;

/** The body type a response declares for 200. */
export type OkBody<R> = [R] extends [ApiResponse<infer T>] ? T : never;

/** The error of a non-200 answer, with the API's code and message when the body has them. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
    readonly code?: ErrorCode,
    /** `ambiguous_vault` (409): the ids of the vaults the bare address names; name one of them. */
    readonly candidates?: VaultId[],
  ) {
    super(message);
  }
}

/** The body of a 200 answer, or throws an ApiError with the API's message (`{ error: { code, message } }`). */
export async function ok<T>(res: ApiResponse<T>): Promise<T> {
  if (res.ok) return res.json();
  let message = `${res.status} ${res.statusText}`;
  let code: ErrorCode | undefined;
  let candidates: VaultId[] | undefined;
  try {
    const body = (await res.json()) as Partial<ErrorBody> | undefined;
    if (body?.error?.message) {
      code = body.error.code;
      message = `${res.status} ${code}: ${body.error.message}`;
      if (Array.isArray(body.error.candidates)) candidates = body.error.candidates;
    }
  } catch {}
  throw new ApiError(res.status, message, code, candidates);
}

/** Arguments of an operation paginated by cursor. */
type PageArgs = { query?: { cursor?: string } };
/** An operation paginated by cursor (events, vaults). */
export type Paginated<A extends PageArgs, T> = Get<A, T[]> | GetOptional<A, T[]>;

/**
 * Every page of a cursor-paginated operation, in order, following `X-Next-Cursor` until the last
 * page; a non-200 answer throws an ApiError. `args.query.cursor` starts from a given page.
 *
 * ```ts
 * for await (const page of pages(api.v1.vaults, { query: { owner, limit: 100 } })) render(page);
 * ```
 */
export async function* pages<A extends PageArgs, T>(
  operation: Paginated<A, T>,
  args: A,
  options?: RequestOptions,
): AsyncGenerator<T[], void, undefined> {
  let current = args;
  for (;;) {
    const res = await operation.$get(current, options);
    yield await ok(res);
    const cursor = nextCursor(res);
    if (cursor === undefined) return;
    current = { ...current, query: { ...current.query, cursor } };
  }
}

/** Every item of a cursor-paginated operation, page after page (see `pages`). */
export async function* items<A extends PageArgs, T>(
  operation: Paginated<A, T>,
  args: A,
  options?: RequestOptions,
): AsyncGenerator<T, void, undefined> {
  for await (const page of pages(operation, args, options)) yield* page;
}
