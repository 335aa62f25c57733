import type { MiddlewareHandler } from 'hono';

export interface CorsConfig {
  /** '*' (any origin: public read, no credentials) or the allowed origins. */
  origins: '*' | string[];
  exposeHeaders: string[];
  maxAgeS: number;
}

/**
 * CORS for a read-only API. Unlike hono/cors it touches the response only after the handler (no
 * placeholder Response per request on the hot path). Preflights (OPTIONS) get 204 with the
 * allowed methods; credentials are never allowed.
 */
export function corsHeaders(config: CorsConfig): MiddlewareHandler {
  const expose = config.exposeHeaders.join(', ');
  const allowed = config.origins === '*' ? null : new Set(config.origins);
  const allowOrigin = (origin: string | undefined): string | null =>
    allowed === null ? '*' : origin && allowed.has(origin) ? origin : null;

  return async (c, next) => {
    const origin = allowOrigin(c.req.header('origin'));
    if (c.req.method === 'OPTIONS') {
      const headers: Record<string, string> = {
        'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
        'Access-Control-Max-Age': String(config.maxAgeS),
        Allow: 'GET, HEAD, OPTIONS',
      };
      const requested = c.req.header('access-control-request-headers');
      if (requested) headers['Access-Control-Allow-Headers'] = requested.slice(0, 512);
      if (origin) headers['Access-Control-Allow-Origin'] = origin;
      if (allowed) headers.Vary = 'Origin';
      return c.body(null, 204, headers);
    }
    await next();
    if (origin) {
      c.res.headers.set('Access-Control-Allow-Origin', origin);
      c.res.headers.set('Access-Control-Expose-Headers', expose);
    }
    if (allowed) c.res.headers.append('Vary', 'Origin');
  };
}
