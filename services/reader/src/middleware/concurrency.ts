import type { Context, MiddlewareHandler } from 'hono';
import { errorResponse } from '../errors.js';
import type { TrustedProxies } from './client-address.js';
import { createClientKey } from './rate-limit.js';

export interface ConcurrencyConfig {
  /** Requests of one client handled at once; 0 disables the cap. */
  perClient: number;
  /** Requests of one client waiting for one of its slots; beyond them, 429. */
  queue: number;
  trustedProxies: TrustedProxies;
  /** Paths never capped (answered from memory: liveness probes). */
  exempt?: readonly string[];
  /** Seconds a refused client is told to wait (Retry-After). */
  retryAfterS?: number;
}

interface Client {
  running: number;
  waiting: (() => void)[];
}

/** The per-client cap, as middleware and for reads made outside a request's handler. */
export interface ConcurrencyLimiter {
  middleware: MiddlewareHandler;
  /**
   * Runs `fn` in one of `key`'s slots, after any request of that client already waiting: a live
   * stream's read (it has no answer to be refused with, so it waits whatever the queue holds).
   */
  withSlot<T>(key: string, fn: () => Promise<T>): Promise<T>;
}

/**
 * Per-client cap on requests in flight, keyed like the rate limit (an IPv4 address, an IPv6 /64).
 * A client's burst of slow requests (each holding a Postgres connection) must not take the whole
 * pool and leave every other client 503: at most `perClient` of its requests run at once, up to
 * `queue` more wait (in order) for one of its own slots — a page firing a few requests together
 * is served, a little later — and the rest are answered 429 `rate_limited` with Retry-After at
 * once. Waiting requests hold no connection. A live stream's reads take its client's slots too
 * (`withSlot`): a client's streams cannot read more at once than its requests could.
 */
export function createConcurrencyLimiter(
  config: ConcurrencyConfig,
  keyOf: (c: Context) => string = createClientKey(config.trustedProxies),
): ConcurrencyLimiter {
  const { perClient, queue } = config;
  const exempt = new Set(config.exempt ?? []);
  const retry = String(config.retryAfterS ?? 1);
  const clients = new Map<string, Client>();

  const release = (key: string, client: Client) => {
    const next = client.waiting.shift();
    if (next) return next(); // the slot passes straight to the next waiting request
    client.running -= 1;
    if (client.running === 0) clients.delete(key);
  };

  const clientOf = (key: string): Client => {
    let client = clients.get(key);
    if (!client) {
      client = { running: 0, waiting: [] };
      clients.set(key, client);
    }
    return client;
  };

  /**
   * Takes one of the client's slots, waiting in line when all are taken; false (no slot taken)
   * when `signal` aborts first: the request left the line.
   */
  const take = async (client: Client, signal?: AbortSignal): Promise<boolean> => {
    if (client.running < perClient) {
      client.running += 1;
      return true;
    }
    return new Promise<boolean>((resolve) => {
      const turn = () => {
        signal?.removeEventListener('abort', leave);
        resolve(true);
      };
      const leave = () => {
        const i = client.waiting.indexOf(turn);
        if (i >= 0) client.waiting.splice(i, 1);
        resolve(false);
      };
      client.waiting.push(turn);
      signal?.addEventListener('abort', leave, { once: true });
    });
  };

  const middleware: MiddlewareHandler = async (c, next) => {
    if (perClient <= 0 || exempt.has(c.req.path)) return next();
    const key = keyOf(c);
    const client = clientOf(key);
    if (client.running >= perClient && client.waiting.length >= queue)
      return errorResponse(
        c,
        429,
        'rate_limited',
        `too many concurrent requests from this client (at most ${perClient} at once); retry in ${retry}s`,
        { 'Retry-After': retry },
      );
    // A request that must wait takes its abort signal now, while its socket may still be open:
    // @hono/node-server makes the signal only when first asked for, and one made after the socket
    // closed never aborts — a live stream would then open on a closed connection and hold its
    // slot until a write deadline. A client that leaves while waiting leaves the line.
    const signal = client.running >= perClient ? c.req.raw.signal : undefined;
    if (!(await take(client, signal))) return c.body(null, 499 as never);
    try {
      await next();
    } finally {
      release(key, client);
    }
  };

  const withSlot = async <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    if (perClient <= 0) return fn();
    const client = clientOf(key);
    await take(client);
    try {
      return await fn();
    } finally {
      release(key, client);
    }
  };

  return { middleware, withSlot };
}

/** The per-client cap as middleware alone (see createConcurrencyLimiter). */
export function concurrencyLimit(
  config: ConcurrencyConfig,
  keyOf: (c: Context) => string = createClientKey(config.trustedProxies),
): MiddlewareHandler {
  return createConcurrencyLimiter(config, keyOf).middleware;
}
