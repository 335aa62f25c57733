import { OpenAPIHono } from '@hono/zod-openapi';
import { screenMeta, strategyList, universeAssets, universePairs } from '@vault-yield/store';
import type { Context } from 'hono';
import { badRequest } from '../errors.js';
import { bodyEtag, notModified, sendJson, sendNotModified } from '../http.js';
import { routes } from '../openapi/routes.js';
import { validationHook } from './declare.js';
import type { RouteDeps } from './deps.js';

/** What X-Screen-Version may carry: 1–100 visible ASCII characters (no space, CR, LF or control). */
export const SCREEN_ID = /^[\x21-\x7e]{1,100}$/;

export function catalogueRoutes({ pool, config }: RouteDeps) {
  const cache = `public, max-age=${config.catalogueMaxAgeS}`;

  // Bodies are serialised store rows; `as never`: see routes/vault.ts.
  const send = (c: Context, body: string, extra: Record<string, string> = {}): never => {
    const etag = bodyEtag(body);
    const headers = { 'Cache-Control': cache, ETag: etag, ...extra };
    if (notModified(c, etag)) return sendNotModified(c, headers) as never;
    return sendJson(c, body, headers) as never;
  };
  const screenHeaders = (meta: Awaited<ReturnType<typeof screenMeta>>): Record<string, string> => {
    if (!meta) return {};
    // The screen id is the publisher's text: checked before it becomes a header (a CR/LF in it
    // would make the response unsendable, a 500).
    if (!SCREEN_ID.test(meta.version))
      throw badRequest(
        'the published screen id is not a valid header value (1–100 visible ASCII characters); publish the screen again under a valid id',
      );
    return { 'X-Screen-Version': meta.version, 'X-Screened-At': String(meta.screenedAt) };
  };

  return new OpenAPIHono({ defaultHook: validationHook })
    .openapi(routes.strategies, async (c) => send(c, JSON.stringify(await strategyList(pool))))
    .openapi(routes.universe, async (c) => {
      const [rows, meta] = await Promise.all([universeAssets(pool), screenMeta(pool)]);
      return send(c, JSON.stringify(rows), screenHeaders(meta));
    })
    .openapi(routes.pairs, async (c) => {
      const [rows, meta] = await Promise.all([universePairs(pool), screenMeta(pool)]);
      return send(c, JSON.stringify(rows), screenHeaders(meta));
    });
}
