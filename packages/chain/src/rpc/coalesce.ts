import type { Transport } from 'viem';

/**
 * Read-only methods whose answer depends only on (method, params) at one moment: identical calls
 * in flight at once may share one request. Writes, filters and node controls are never shared.
 */
export const COALESCED_METHODS: ReadonlySet<string> = new Set([
  'eth_blockNumber',
  'eth_call',
  'eth_chainId',
  'eth_getBalance',
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getCode',
  'eth_getLogs',
  'eth_getStorageAt',
  'eth_getTransactionReceipt',
]);

/**
 * Set on a call's arguments (`{ method, params, [UNSHARED]: true }`) when it must be answered by a
 * request sent after it was made — "has the head moved since my read was answered?" — and so may
 * never join an identical call already in flight (sent before). JSON leaves symbol keys out: the
 * node never sees it.
 */
export const UNSHARED: unique symbol = Symbol('vault-yield.rpc.unshared');

/**
 * Wraps a viem transport so identical JSON-RPC calls in flight at the same time go over the wire
 * once and every caller gets that answer (or that error). Besides saving requests, it keeps
 * concurrent callers from sending the same call twice around a provider's 429: the second copy
 * would arrive before the Retry-After the first was given.
 */
export function coalesceTransport<T extends Transport>(
  transport: T,
  opts: {
    methods?: ReadonlySet<string>;
    onCoalesced?: (method: string) => void;
    /** Awaited before a call goes to the transport (before its time-out starts), e.g. a Retry-After. */
    before?: () => Promise<void> | void;
  } = {},
): T {
  const methods = opts.methods ?? COALESCED_METHODS;
  return ((config: Parameters<T>[0]) => {
    const inner = transport(config);
    const inFlight = new Map<string, Promise<unknown>>();
    const send = inner.request as (
      args: { method: string; params?: unknown },
      options?: unknown,
    ) => Promise<unknown>;
    const request = (args: { method: string; params?: unknown }, options?: unknown): Promise<unknown> => {
      if (!methods.has(args.method) || (args as { [UNSHARED]?: boolean })[UNSHARED])
        return send(args, options);
      let key: string;
      try {
        key = JSON.stringify([args.method, args.params ?? null]);
      } catch {
        return send(args, options); // not JSON (a bigint): never on the wire as is anyway
      }
      const pending = inFlight.get(key);
      if (pending) {
        opts.onCoalesced?.(args.method);
        return pending;
      }
      const p = send(args, options).finally(() => inFlight.delete(key));
      inFlight.set(key, p);
      return p;
    };
    return { ...inner, request: request as typeof inner.request };
  }) as T;
}
