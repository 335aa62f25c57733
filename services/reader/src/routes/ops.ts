import { createHash, timingSafeEqual } from 'node:crypto';
import { OpenAPIHono } from '@hono/zod-openapi';
import { readiness } from '@vault-yield/store';
import type { Context } from 'hono';
import type { Registry } from 'prom-client';
import { errorResponse } from '../errors.js';
import type { FreshnessProbe } from '../freshness.js';
import { sendJson } from '../http.js';
import { docsPage } from '../openapi/docs.js';
import { routes } from '../openapi/routes.js';
import { validationHook } from './declare.js';
import type { RouteDeps } from './deps.js';

export interface OpsDeps extends RouteDeps {
  registry: Registry;
  /** The OpenAPI document, made once the whole app is declared. */
  doc: () => Record<string, unknown>;
  /** True once stop() has begun: /ready turns 503 so load balancers drain the instance. */
  draining: () => boolean;
  /** How far the projection is behind the log and the chain (/ready turns 503 beyond the limits). */
  freshness: FreshnessProbe;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * True when the request carries the operators' token (`Authorization: Bearer <ADMIN_TOKEN>`),
 * compared in constant time; never without a configured token.
 */
export function adminCheck(token: string | undefined): (c: Context) => boolean {
  if (token === undefined) return () => false;
  const expected = digest(token);
  return (c) => {
    const m = /^Bearer\s+(\S{1,1024})\s*$/i.exec(c.req.header('authorization') ?? '');
    return m !== null && timingSafeEqual(digest(m[1] as string), expected);
  };
}

export function opsRoutes({ pool, config, log, registry, doc, draining, freshness }: OpsDeps) {
  const noStore = { 'Cache-Control': 'no-store' };
  const isAdmin = adminCheck(config.adminToken);
  let docJson: string | undefined;
  const docs = docsPage();

  return new OpenAPIHono({ defaultHook: validationHook })
    .openapi(routes.health, (c) => sendJson(c, '{"status":"ok"}', noStore) as never)
    .openapi(routes.ready, async (c) => {
      // The status code is for everyone (load balancers, probes); the details for the operators.
      const admin = isAdmin(c);
      const notReady = (detail: string) =>
        errorResponse(c, 503, 'unavailable', admin ? detail : 'not ready') as never;
      if (draining()) return notReady('shutting down');
      try {
        const r = await readiness(pool, config.schema);
        if (!r.current)
          return notReady(
            `projection schema ${config.schema} is at migration ${r.applied}, expected ${r.expected}`,
          );
        // A replica that fell behind leaves the pool until it catches up (limits: READY_MAX_LAG_*).
        const f = await freshness.read();
        if (f.tooFar) return notReady(f.tooFar);
        if (!admin) return sendJson(c, '{"status":"ready"}', noStore) as never;
        return sendJson(
          c,
          JSON.stringify({
            status: 'ready',
            schema: config.schema,
            migration: r.applied,
            deadLetters: r.deadLetters,
            vaultsBehind: r.vaultsBehind,
            lag: {
              records: f.records,
              blocks: f.blocks,
              seconds: f.seconds,
              foldedBlock: f.folded.blockNumber,
              headBlock: f.head?.blockNumber ?? null,
              chainId: f.chainId,
              ...(f.kafkaError ? { recordsUnknown: f.kafkaError } : {}),
            },
          }),
          noStore,
        ) as never;
      } catch (err) {
        log.warn({ err }, 'readiness check failed');
        return notReady('database unavailable');
      }
    })
    .openapi(routes.metrics, async (c) => {
      if (!isAdmin(c))
        return errorResponse(
          c,
          401,
          'unauthorized',
          config.adminToken === undefined
            ? 'metrics are served to the operators only, and no ADMIN_TOKEN is set'
            : 'metrics are served to the operators only: send Authorization: Bearer <ADMIN_TOKEN>',
          { 'WWW-Authenticate': 'Bearer realm="vault-yield-admin"' },
        ) as never;
      return c.body(await registry.metrics(), 200, {
        'Content-Type': registry.contentType,
        ...noStore,
      }) as never;
    })
    .openapi(routes.openapi, (c) => {
      docJson ??= JSON.stringify(doc());
      return sendJson(c, docJson, { 'Cache-Control': 'public, max-age=300' }) as never;
    })
    .openapi(routes.docs, (c) => c.html(docs.html, 200, { 'Cache-Control': 'public, max-age=300' }) as never)
    .get(docs.bundlePath, (c) => docs.bundle(c));
}
