import { createHash } from 'node:crypto';
import type { Context } from 'hono';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Sends already-serialised JSON (no re-serialisation), with an explicit Content-Length. */
export function sendJson(c: Context, body: string, headers: Record<string, string> = {}): Response {
  return c.body(body, 200, {
    'Content-Type': JSON_TYPE,
    'Content-Length': String(Buffer.byteLength(body)),
    ...headers,
  });
}

/** Weak ETag of a body (lists whose rows carry no version of their own). */
export function bodyEtag(body: string): string {
  return `W/"${createHash('sha1').update(body).digest('base64url')}"`;
}

/** If-None-Match with weak comparison (RFC 9110 §13.1.2): true when `etag` matches. */
export function notModified(c: Context, etag: string): boolean {
  const header = c.req.header('if-none-match');
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}

/** 304 with the validators and caching headers a 200 would have carried. */
export function sendNotModified(c: Context, headers: Record<string, string>): Response {
  return c.body(null, 304, headers);
}

/** Serialises rows already rendered as JSON text into one array. */
export const jsonArray = (rows: readonly string[]) => `[${rows.join(',')}]`;
