/**
 * Retries of 429 (rate limited) and 503 (unavailable) answers, waiting what `Retry-After` says,
 * a bounded number of times: every operation of the read API is a GET, so a retry is always safe.
 */

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 never retries). */
  retries?: number;
  /**
   * Longest wait before one retry, in ms (default 30 000). An answer asking for longer is not
   * waited for: it is returned as it is (the caller sees the 429 / 503).
   */
  maxDelayMs?: number;
  /** Wait when the answer carries no usable `Retry-After`, in ms, doubled each retry (default 500). */
  fallbackDelayMs?: number;
}

/** The statuses retried: the API answers them with `Retry-After`. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 503]);

export const RETRY_DEFAULTS = { retries: 3, maxDelayMs: 30_000, fallbackDelayMs: 500 } as const;

/**
 * The wait `Retry-After` asks for, in ms: delta-seconds (`120`) or an HTTP date (never negative);
 * undefined when absent or unreadable.
 */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  if (!/^[A-Za-z]{3},? .+ GMT$/.test(text)) return undefined; // an HTTP date (IMF-fixdate or RFC 850)
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** setTimeout as a promise, cut short (rejected with the signal's reason) when `signal` aborts. */
export const sleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * `fetch` with the retries above: a 429 / 503 is fetched again after its `Retry-After` (or the
 * fallback backoff), at most `retries` times and never after a wait over `maxDelayMs`; the last
 * answer is returned whatever its status. Network errors are not retried (they are thrown).
 */
export function retryingFetch(
  fetchFn: typeof fetch,
  options: RetryOptions | false | undefined,
  wait: Sleep = sleep,
): (url: string, init: RequestInit) => Promise<Response> {
  const retries = options === false ? 0 : (options?.retries ?? RETRY_DEFAULTS.retries);
  const maxDelayMs = options === false ? 0 : (options?.maxDelayMs ?? RETRY_DEFAULTS.maxDelayMs);
  const fallback = options === false ? 0 : (options?.fallbackDelayMs ?? RETRY_DEFAULTS.fallbackDelayMs);
  return async (url, init) => {
    for (let attempt = 0; ; attempt++) {
      const res = await fetchFn(url, init);
      if (!RETRY_STATUSES.has(res.status) || attempt >= retries) return res;
      const delay = retryAfterMs(res.headers.get('retry-after')) ?? fallback * 2 ** attempt;
      if (delay > maxDelayMs) return res;
      await res.body?.cancel().catch(() => undefined); // free the connection
      await wait(delay, init.signal ?? undefined);
    }
  };
}
