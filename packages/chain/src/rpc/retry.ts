import { classifyRpcError, type RpcErrorKind } from './errors.js';

export interface RetryOptions {
  /** Attempts after the first (default 5). */
  retries?: number;
  /** First back-off (ms, default 100); doubles each attempt up to maxDelayMs (default 5000). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /**
   * Retries of 'behind' answers (the node has not got the block yet), on a budget of their own
   * so a lagging node does not spend the others: default 40, each ≤ 1 s apart (≈ 30 s in all).
   */
  behindRetries?: number;
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
  const behindRetries = opts.behindRetries ?? 40;
  const retryOn = opts.retryOn ?? ['range', 'timeout', 'rate-limit', 'transient', 'behind'];
  let attempt = 0;
  let behind = 0;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      const kind = classifyRpcError(error);
      if (!retryOn.includes(kind) || opts.signal?.aborted) throw error;
      if (kind === 'behind') {
        if (behind++ >= behindRetries) throw error;
        const delayMs = Math.min(1000, base * 2 ** Math.min(behind - 1, 10)) * (0.5 + Math.random() / 2);
        opts.onRetry?.({ attempt: attempt + behind, kind, error, delayMs });
        await sleep(delayMs, opts.signal);
        continue;
      }
      if (attempt >= retries) throw error;
      attempt++;
      const backoff = Math.min(max, base * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
      const asked = kind === 'rate-limit' ? retryAfterMs(error) : undefined;
      const delayMs = asked === undefined ? backoff : Math.max(backoff, asked);
      opts.onRetry?.({ attempt, kind, error, delayMs });
      await sleep(delayMs, opts.signal);
    }
  }
}
