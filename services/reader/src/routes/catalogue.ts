import { screenMeta, strategyList, universeAssets, universePairs } from '@vault-yield/store';
import type { Context, Hono } from 'hono';
import { bodyEtag, notModified, sendJson, sendNotModified } from '../http.js';
import { noQuery, parseQuery } from '../params.js';
import type { RouteDeps } from './deps.js';

export function catalogueRoutes(app: Hono, { pool, config }: RouteDeps): void {
  const cache = `public, max-age=${config.catalogueMaxAgeS}`;

  const send = (c: Context, body: string, extra: Record<string, string> = {}) => {
    const etag = bodyEtag(body);
    const headers = { 'Cache-Control': cache, ETag: etag, ...extra };
    if (notModified(c, etag)) return sendNotModified(c, headers);
    return sendJson(c, body, headers);
  };
  const screenHeaders = (meta: Awaited<ReturnType<typeof screenMeta>>): Record<string, string> =>
    meta ? { 'X-Screen-Version': meta.version, 'X-Screened-At': String(meta.screenedAt) } : {};

  app.get('/v1/strategies', async (c) => {
    parseQuery(c, noQuery);
    return send(c, JSON.stringify(await strategyList(pool)));
  });

  app.get('/v1/universe', async (c) => {
    parseQuery(c, noQuery);
    const [rows, meta] = await Promise.all([universeAssets(pool), screenMeta(pool)]);
    return send(c, JSON.stringify(rows), screenHeaders(meta));
  });

  app.get('/v1/universe/pairs', async (c) => {
    parseQuery(c, noQuery);
    const [rows, meta] = await Promise.all([universePairs(pool), screenMeta(pool)]);
    return send(c, JSON.stringify(rows), screenHeaders(meta));
  });
}
