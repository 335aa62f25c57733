import { classifyRpcError, type RpcErrorKind } from './errors.js';

export interface RetryOptions {
  /** Attempts after the first (default 5). */
  retries?: number;
  /** First back-off (ms, default 100); doubles each attempt up to maxDelayMs (default 5000). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Which kinds to retry (default: everything but 'fatal'). */
  retryOn?: readonly RpcErrorKind[];
  /** Called before each retry (log it, count it). */
  onRetry?: (info: { attempt: number; kind: RpcErrorKind; error: unknown; delayMs: number }) => void;
  signal?: AbortSignal;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    // Already aborted (stop() ran while the call failed): an 'abort' listener would never fire.
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Longest Retry-After honoured (a provider asking for more is waited for in several goes). */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * The wait a rate-limited answer asks for (`Retry-After`: delta-seconds or an HTTP date), in ms;
 * undefined when the error carries none. viem keeps the response headers on HttpRequestError.
 */
export function retryAfterMs(err: unknown, now = Date.now()): number | undefined {
  let e: unknown = err;
  for (let i = 0; i < 5 && e; i++) {
    const headers = (e as { headers?: unknown }).headers;
    if (headers && typeof (headers as Headers).get === 'function') {
      const v = (headers as Headers).get('retry-after')?.trim();
      if (v) {
        if (/^\d+(\.\d+)?$/.test(v)) return Math.min(MAX_RETRY_AFTER_MS, Number(v) * 1000);
        const at = Date.parse(v);
        if (!Number.isNaN(at)) return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, at - now));
      }
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Runs `fn`, retrying classified-retryable RPC failures with exponential back-off and jitter; a
 * rate-limited answer's `Retry-After` is honoured (waited at least that long).
 */
export async function withRetry<T>(fn: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const retries = opts.retries ?? 5;
  const base = opts.baseDelayMs ?? 100;
  const max = opts.maxDelayMs ?? 5000;
  const retryOn = opts.retryOn ?? ['range', 'timeout', 'rate-limit', 'transient'];
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      const kind = classifyRpcError(error);
      if (attempt >= retries || !retryOn.includes(kind) || opts.signal?.aborted) throw error;
      const backoff = Math.min(max, base * 2 ** attempt) * (0.5 + Math.random() / 2);
      const asked = kind === 'rate-limit' ? retryAfterMs(error) : undefined;
      const delayMs = asked === undefined ? backoff : Math.max(backoff, asked);
      opts.onRetry?.({ attempt: attempt + 1, kind, error, delayMs });
      await sleep(delayMs, opts.signal);
    }
  }
}
