import { OpenAPIHono } from '@hono/zod-openapi';
import { readiness } from '@vault-yield/store';
import type { Registry } from 'prom-client';
import { errorResponse } from '../errors.js';
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
}

export function opsRoutes({ pool, config, log, registry, doc, draining }: OpsDeps) {
  const noStore = { 'Cache-Control': 'no-store' };
  let docJson: string | undefined;
  const docs = docsPage();

  return new OpenAPIHono({ defaultHook: validationHook })
    .openapi(routes.health, (c) => sendJson(c, '{"status":"ok"}', noStore) as never)
    .openapi(routes.ready, async (c) => {
      if (draining()) return errorResponse(c, 503, 'unavailable', 'shutting down') as never;
      try {
        const r = await readiness(pool, config.schema);
        if (!r.current)
          return errorResponse(
            c,
            503,
            'unavailable',
            `projection schema ${config.schema} is at migration ${r.applied}, expected ${r.expected}`,
          ) as never;
        return sendJson(
          c,
          JSON.stringify({
            status: 'ready',
            schema: config.schema,
            migration: r.applied,
            deadLetters: r.deadLetters,
            vaultsBehind: r.vaultsBehind,
          }),
          noStore,
        ) as never;
      } catch (err) {
        log.warn({ err }, 'readiness check failed');
        return errorResponse(c, 503, 'unavailable', 'database unavailable') as never;
      }
    })
    .openapi(
      routes.metrics,
      async (c) =>
        c.body(await registry.metrics(), 200, {
          'Content-Type': registry.contentType,
          ...noStore,
        }) as never,
    )
    .openapi(routes.openapi, (c) => {
      docJson ??= JSON.stringify(doc());
      return sendJson(c, docJson, { 'Cache-Control': 'public, max-age=300' }) as never;
    })
    .openapi(routes.docs, (c) => c.html(docs.html, 200, { 'Cache-Control': 'public, max-age=300' }) as never)
    .get(docs.bundlePath, (c) => docs.bundle(c));
}
