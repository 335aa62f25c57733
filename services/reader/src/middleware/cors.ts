import type { MiddlewareHandler } from 'hono';

export interface CorsConfig {
  /** '*' (any origin: public read, no credentials) or the allowed origins. */
  origins: '*' | string[];
  exposeHeaders: string[];
  maxAgeS: number;
}

const allowOriginOf = (config: CorsConfig) => {
  const allowed = config.origins === '*' ? null : new Set(config.origins);
  return {
    allowed,
    of: (origin: string | undefined): string | null =>
      allowed === null ? '*' : origin && allowed.has(origin) ? origin : null,
  };
};

/**
 * CORS for a read-only API. Unlike hono/cors it touches the response only after the handler (no
 * placeholder Response per request on the hot path). It sets the allowed origin on every answer
 * (a 429 included, so a page can read it); credentials are never allowed. Preflights are answered
 * by corsPreflight, placed after the rate limit so that they count.
 */
export function corsHeaders(config: CorsConfig): MiddlewareHandler {
  const expose = config.exposeHeaders.join(', ');
  const { allowed, of } = allowOriginOf(config);
  return async (c, next) => {
    const origin = of(c.req.header('origin'));
    await next();
    if (origin) {
      c.res.headers.set('Access-Control-Allow-Origin', origin);
      if (c.req.method !== 'OPTIONS') c.res.headers.set('Access-Control-Expose-Headers', expose);
    }
    if (allowed) c.res.headers.append('Vary', 'Origin');
  };
}

/** Preflights (OPTIONS) get 204 with the allowed methods and the requested headers. */
export function corsPreflight(config: CorsConfig): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== 'OPTIONS') return next();
    const headers: Record<string, string> = {
      'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
      'Access-Control-Max-Age': String(config.maxAgeS),
      Allow: 'GET, HEAD, OPTIONS',
    };
    const requested = c.req.header('access-control-request-headers');
    if (requested) headers['Access-Control-Allow-Headers'] = requested.slice(0, 512);
    return c.body(null, 204, headers);
  };
}
