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

/** Runs `fn`, retrying classified-retryable RPC failures with exponential back-off and jitter. */
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
      const delayMs = Math.min(max, base * 2 ** attempt) * (0.5 + Math.random() / 2);
      opts.onRetry?.({ attempt: attempt + 1, kind, error, delayMs });
      await sleep(delayMs, opts.signal);
    }
  }
}
