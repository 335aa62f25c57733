import { OpenAPIHono } from '@hono/zod-openapi';
import { activityTypes } from '@vault-yield/domain';
import { equitySeries, ledgerPage, ledgerTxPage, vaultExists, vaultPage } from '@vault-yield/store';
import type { Context } from 'hono';
import { notFound } from '../errors.js';
import { bodyEtag, jsonArray, notModified, sendJson, sendNotModified } from '../http.js';
import { routes } from '../openapi/routes.js';
import { encodeEventsCursor, encodeTxCursor, encodeVaultsCursor } from '../params.js';
import { createSnapshotLoader } from '../snapshot-loader.js';
import { validationHook } from './declare.js';
import type { RouteDeps } from './deps.js';

/** `Link: <…>; rel="next"` for the same path and query with `cursor` replaced. */
function nextLink(path: string, url: string, cursor: string): string {
  const q = url.indexOf('?');
  const params = new URLSearchParams(q >= 0 ? url.slice(q + 1) : '');
  params.delete('cursor');
  params.append('cursor', cursor);
  return `<${path}?${params.toString()}>; rel="next"`;
}

// Bodies are JSON text straight from the store (never re-serialised); the route declarations give
// their types to the client, and the tests check every body against the generated document.
// `as never` tells the typed handler so.

export function vaultRoutes({ pool, config }: RouteDeps) {
  const cache = `public, max-age=${config.cacheMaxAgeS}`;
  const snapshots = createSnapshotLoader(pool, Math.max(1, Math.ceil(config.poolMax / 2)));

  /** Weak-ETag'd JSON list with the vault-resource cache policy. */
  const list = (c: Context, body: string, extra: Record<string, string> = {}): never => {
    const etag = bodyEtag(body);
    const headers = { 'Cache-Control': cache, ETag: etag };
    if (notModified(c, etag)) return sendNotModified(c, headers) as never;
    return sendJson(c, body, { ...headers, ...extra }) as never;
  };

  return new OpenAPIHono({ defaultHook: validationHook })
    .openapi(routes.snapshot, async (c) => {
      const vault = c.req.valid('param').address;
      const row = await snapshots.load(vault);
      if (!row) throw notFound(`vault ${vault} not found`);
      const headers = { 'Cache-Control': cache, ETag: `"${row.etag}"` };
      if (notModified(c, headers.ETag)) return sendNotModified(c, headers) as never;
      return sendJson(c, row.json, headers) as never;
    })
    .openapi(routes.equity, async (c) => {
      const vault = c.req.valid('param').address;
      const q = c.req.valid('query');
      const [exists, points] = await Promise.all([
        vaultExists(pool, vault),
        equitySeries(pool, { vault, from: q.from, to: q.to, points: q.points }),
      ]);
      if (!exists) throw notFound(`vault ${vault} not found`);
      return list(c, JSON.stringify(points));
    })
    .openapi(routes.events, async (c) => {
      const vault = c.req.valid('param').address;
      const q = c.req.valid('query');
      const [exists, page] = await Promise.all([
        vaultExists(pool, vault),
        ledgerPage(pool, {
          vault,
          types: q.type ?? activityTypes,
          since: q.since,
          until: q.until,
          after: q.cursor,
          limit: q.limit,
        }),
      ]);
      if (!exists) throw notFound(`vault ${vault} not found`);
      const extra: Record<string, string> = {};
      if (page.next) {
        const cursor = encodeEventsCursor(page.next);
        extra['X-Next-Cursor'] = cursor;
        extra.Link = nextLink(`/v1/vault/${vault}/events`, c.req.url, cursor);
      }
      return list(c, jsonArray(page.rows), extra);
    })
    .openapi(routes.tx, async (c) => {
      const hash = c.req.valid('param').hash;
      const q = c.req.valid('query');
      const page = await ledgerTxPage(pool, {
        txHash: hash,
        types: activityTypes,
        after: q.cursor,
        limit: q.limit,
      });
      if (page.rows.length === 0 && !q.cursor) throw notFound(`no activity recorded for transaction ${hash}`);
      const extra: Record<string, string> = {};
      if (page.next) {
        const cursor = encodeTxCursor(page.next);
        extra['X-Next-Cursor'] = cursor;
        extra.Link = nextLink(`/v1/tx/${hash}`, c.req.url, cursor);
      }
      return list(c, jsonArray(page.rows), extra);
    })
    .openapi(routes.vaults, async (c) => {
      const q = c.req.valid('query');
      const page = await vaultPage(pool, { owner: q.owner, after: q.cursor, limit: q.limit });
      const extra: Record<string, string> = {};
      if (page.next) {
        const cursor = encodeVaultsCursor(page.next);
        extra['X-Next-Cursor'] = cursor;
        extra.Link = nextLink('/v1/vaults', c.req.url, cursor);
      }
      return list(c, JSON.stringify(page.rows), extra);
    });
}
