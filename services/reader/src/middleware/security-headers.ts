import type { MiddlewareHandler } from 'hono';

/** Directives every page of the reader gets; `extra` adds the sources one page needs. */
export function contentSecurityPolicy(extra: Record<string, string> = {}): string {
  const directives: Record<string, string> = {
    'default-src': "'self'",
    'base-uri': "'none'",
    'object-src': "'none'",
    'form-action': "'self'",
    'frame-ancestors': "'none'",
    'img-src': "'self' data:",
    ...extra,
  };
  return Object.entries(directives)
    .map(([k, v]) => `${k} ${v}`)
    .join('; ');
}

/**
 * Headers of the pages (/dashboard, /docs) and their assets: the page's Content-Security-Policy
 * (nothing from elsewhere, no framing: frame-ancestors 'none' and X-Frame-Options DENY for older
 * browsers), no MIME sniffing, no referrer sent to links out.
 */
export function pageHeaders(csp: string): MiddlewareHandler {
  return async (c, next) => {
    await next();
    c.res.headers.set('Content-Security-Policy', csp);
    c.res.headers.set('X-Frame-Options', 'DENY');
    c.res.headers.set('X-Content-Type-Options', 'nosniff');
    c.res.headers.set('Referrer-Policy', 'no-referrer');
  };
}

/** `X-Content-Type-Options: nosniff` on every answer (JSON and text are never to be sniffed). */
export const noSniff: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set('X-Content-Type-Options', 'nosniff');
};
