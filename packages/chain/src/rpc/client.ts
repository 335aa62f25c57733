import { createPublicClient, http, type Transport } from 'viem';
import { type ChainClient, type ChainClientConfig, chainOf } from '../client/index.js';
import { coalesceTransport } from './coalesce.js';
import { retryAfterMs } from './retry.js';

/** JSON-RPC calls and HTTP requests made by one client (a batch is one request, many calls). */
export interface RpcStats {
  httpRequests: number;
  calls: number;
  byMethod: Map<string, number>;
  /** Calls that joined an identical call already in flight instead of going on the wire. */
  coalesced: number;
}

/**
 * Told of every JSON-RPC call that goes on the wire (a call that joined an identical one in
 * flight is not: see coalesceTransport), e.g. to feed metrics.
 */
export interface RpcCallObserver {
  /** A call was sent (each call of a JSON-RPC batch counts, as in `RpcStats.calls`). */
  onCall?: (method: string) => void;
  /**
   * A call was answered (`failed` false) or failed (an RPC error, an HTTP error, a time-out),
   * `seconds` after it was made: the wait for its batch and for a provider's Retry-After included.
   */
  onCallDone?: (method: string, seconds: number, failed: boolean) => void;
}

export interface CountingChainClient {
  /** Batches concurrent calls (eth_call, headers) into JSON-RPC batches. */
  client: ChainClient;
  /**
   * Never batches: for eth_getLogs, whose large answers must not wait for (or be refused with)
   * the rest of a batch. Same counters.
   */
  logsClient: ChainClient;
  stats: RpcStats;
}

/**
 * Like createChainClient, but counts what goes over the wire (the indexer reports RPC calls in
 * its metrics and the bench). `cacheTime` defaults to 0: the indexer reads the head itself.
 */
export function createCountingChainClient(
  config: ChainClientConfig & {
    /** Largest eth_getLogs answer the logs client reads (default 16 MiB). */
    maxLogsResponseBytes?: number;
    /**
     * Largest answer to one JSON-RPC batch of the batched client (default 64 MiB). A batch of 200
     * block headers of busy blocks (each lists its transaction hashes) passed viem's 10 MiB default
     * on the bench chain (17.8 MB) and failed every step: a batch cannot be split by a retry.
     */
    maxBatchResponseBytes?: number;
    /** Told of each call on the wire and of its answer (both clients). */
    observer?: RpcCallObserver;
  },
): CountingChainClient {
  const stats: RpcStats = { httpRequests: 0, calls: 0, byMethod: new Map(), coalesced: 0 };
  const chain = chainOf(config);
  const count = (body: unknown) => {
    if (typeof body !== 'string') return;
    try {
      const parsed = JSON.parse(body) as { method?: string } | { method?: string }[];
      for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
        stats.calls++;
        const m = call.method ?? '?';
        stats.byMethod.set(m, (stats.byMethod.get(m) ?? 0) + 1);
        config.observer?.onCall?.(m);
      }
    } catch {
      // not JSON: count the request only
    }
  };
  const batch = config.batch ?? { batchSize: 200, wait: 0 };
  /**
   * A provider's Retry-After holds for the whole client, not only for the call it answered: every
   * request waits until then (concurrent callers share caches, and one of them would otherwise
   * send the same call again at once).
   */
  let notBefore = 0;
  const gate = async () => {
    for (let wait = notBefore - Date.now(); wait > 0; wait = notBefore - Date.now())
      await new Promise((r) => setTimeout(r, wait));
  };
  // Calls wait before their request starts (its time-out would otherwise run out in the wait,
  // and the answer to a call sent at the very end of it be dropped unread); fetchFn waits again
  // for requests already under way when the 429 came.
  const fetchFn: typeof fetch = async (input, init) => {
    await gate();
    const res = await fetch(input, init);
    if (res.status === 429) {
      const ms = retryAfterMs({ headers: res.headers });
      if (ms !== undefined) notBefore = Math.max(notBefore, Date.now() + ms);
    }
    return res;
  };
  const make = (batched: boolean) =>
    createPublicClient({
      chain,
      cacheTime: config.cacheTime ?? 0,
      pollingInterval: config.pollingInterval ?? 1000,
      // Identical calls in flight share one request (see coalesceTransport).
      transport: coalesceTransport(
        timeTransport(
          http(config.rpcUrl, {
            batch: !batched || batch === false ? false : batch === true ? { batchSize: 200 } : batch,
            // getLogs answers are large by design (the indexer sizes ranges to thousands of logs);
            // above this the range is refused and split (classifyRpcError: 'range').
            maxResponseBodySize: batched
              ? (config.maxBatchResponseBytes ?? 64 * 1024 * 1024)
              : (config.maxLogsResponseBytes ?? 16 * 1024 * 1024),
            timeout: config.timeoutMs ?? 30_000,
            // Retries are ours (withRetry), classified; the transport's own would hide range errors.
            retryCount: config.retryCount ?? 0,
            fetchFn,
            onFetchRequest: (_request, init) => {
              stats.httpRequests++;
              count(init.body);
            },
          }),
          config.observer?.onCallDone,
        ),
        {
          onCoalesced: () => {
            stats.coalesced++;
          },
          before: gate,
        },
      ),
    }) as ChainClient;
  return { client: make(true), logsClient: make(false), stats };
}

/**
 * Wraps a viem transport so each call's time from request to answer (or failure) is reported by
 * method. Placed under coalesceTransport: only calls that go on the wire are timed.
 */
function timeTransport<T extends Transport>(transport: T, done: RpcCallObserver['onCallDone']): T {
  if (!done) return transport;
  return ((config: Parameters<T>[0]) => {
    const inner = transport(config);
    const send = inner.request as (
      args: { method: string; params?: unknown },
      options?: unknown,
    ) => Promise<unknown>;
    const request = async (args: { method: string; params?: unknown }, options?: unknown) => {
      const start = performance.now();
      let failed = true;
      try {
        const answer = await send(args, options);
        failed = false;
        return answer;
      } finally {
        done(args.method, (performance.now() - start) / 1000, failed);
      }
    };
    return { ...inner, request: request as typeof inner.request };
  }) as T;
}
