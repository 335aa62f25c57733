import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { errorResponse } from '../errors.js';
import { clientKey, createClientAddress, type TrustedProxies } from './client-address.js';

/**
 * The function naming a request's client key (client-address.ts: the rightmost untrusted
 * address, then its IPv4 address or IPv6 /64), shared by the rate limit and the concurrency cap.
 */
export function createClientKey(trustedProxies: TrustedProxies): (c: Context) => string {
  const clientAddress = createClientAddress(trustedProxies);
  return (c) => {
    let peer: string | undefined;
    try {
      peer = getConnInfo(c).remote.address;
    } catch {
      peer = undefined; // not served by @hono/node-server (app.request in tests)
    }
    return clientKey(clientAddress(peer, c.req.header('x-forwarded-for')));
  };
}

export interface RateLimitConfig {
  /** Tokens added per second per client; 0 disables rate limiting. */
  ratePerSecond: number;
  /** Bucket size: the burst a client may send at once. */
  burst: number;
  /** Which peers are our proxies: the client is the rightmost untrusted X-Forwarded-For entry. */
  trustedProxies: TrustedProxies;
  /** Paths never limited (answered from memory: liveness probes). */
  exempt?: readonly string[];
  /** Clients tracked at most; beyond it the fullest (idle) buckets are dropped first. */
  maxClients?: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Per-client token bucket, keyed by client key (an IPv4 address, an IPv6 /64). Each request
 * takes one token, CORS preflights (OPTIONS) included; a client with none gets 429 with
 * Retry-After (whole seconds until a token is back) and the RateLimit-* headers
 * (draft-ietf-httpapi-ratelimit-headers: Limit = burst, Remaining, Reset in seconds).
 */
export function rateLimit(config: RateLimitConfig, now: () => number = Date.now): MiddlewareHandler {
  const { ratePerSecond: rate, burst } = config;
  const maxClients = config.maxClients ?? 100_000;
  const buckets = new Map<string, Bucket>();

  const exempt = new Set(config.exempt ?? []);
  const clientOf = createClientKey(config.trustedProxies);

  const sweep = (t: number) => {
    // Drop buckets that have refilled completely: they are indistinguishable from new ones.
    for (const [k, b] of buckets) if (b.tokens + ((t - b.at) / 1000) * rate >= burst) buckets.delete(k);
    // Still too many (a flood of distinct clients): drop the oldest entries.
    for (const k of buckets.keys()) {
      if (buckets.size <= maxClients / 2) break;
      buckets.delete(k);
    }
  };

  return async (c, next) => {
    if (rate <= 0 || exempt.has(c.req.path)) return next();
    const t = now();
    const key = clientOf(c);
    let b = buckets.get(key);
    if (!b) {
      if (buckets.size >= maxClients) sweep(t);
      b = { tokens: burst, at: t };
      buckets.set(key, b);
    } else {
      b.tokens = Math.min(burst, b.tokens + ((t - b.at) / 1000) * rate);
      b.at = t;
    }
    const resetS = (n: number) => Math.max(0, Math.ceil((n / rate) * 1000) / 1000);
    if (b.tokens < 1) {
      const retry = Math.max(1, Math.ceil((1 - b.tokens) / rate));
      return errorResponse(c, 429, 'rate_limited', `rate limit exceeded: retry in ${retry}s`, {
        'Retry-After': String(retry),
        'RateLimit-Limit': String(burst),
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': String(retry),
      });
    }
    b.tokens -= 1;
    await next();
    c.header('RateLimit-Limit', String(burst));
    c.header('RateLimit-Remaining', String(Math.floor(b.tokens)));
    c.header('RateLimit-Reset', String(Math.ceil(resetS(burst - b.tokens))));
  };
}
