import { readiness } from '@vault-yield/store';
import type { Hono } from 'hono';
import type { Registry } from 'prom-client';
import { errorResponse } from '../errors.js';
import { sendJson } from '../http.js';
import { renderDocs } from '../openapi/docs.js';
import { noQuery, parseQuery } from '../params.js';
import type { RouteDeps } from './deps.js';

export interface OpsDeps extends RouteDeps {
  registry: Registry;
  doc: Record<string, unknown>;
  /** True once stop() has begun: /ready turns 503 so load balancers drain the instance. */
  draining: () => boolean;
}

export function opsRoutes(app: Hono, { pool, config, log, registry, doc, draining }: OpsDeps): void {
  const noStore = { 'Cache-Control': 'no-store' };
  const docJson = JSON.stringify(doc);
  const docHtml = renderDocs(doc);

  app.get('/health', (c) => {
    parseQuery(c, noQuery);
    return sendJson(c, '{"status":"ok"}', noStore);
  });

  app.get('/ready', async (c) => {
    parseQuery(c, noQuery);
    if (draining()) return errorResponse(c, 503, 'unavailable', 'shutting down');
    try {
      const r = await readiness(pool, config.schema);
      if (!r.current)
        return errorResponse(
          c,
          503,
          'unavailable',
          `projection schema ${config.schema} is at migration ${r.applied}, expected ${r.expected}`,
        );
      return sendJson(
        c,
        JSON.stringify({ status: 'ready', schema: config.schema, migration: r.applied }),
        noStore,
      );
    } catch (err) {
      log.warn({ err }, 'readiness check failed');
      return errorResponse(c, 503, 'unavailable', 'database unavailable');
    }
  });

  app.get('/metrics', async (c) => {
    parseQuery(c, noQuery);
    return c.body(await registry.metrics(), 200, { 'Content-Type': registry.contentType, ...noStore });
  });

  app.get('/openapi.json', (c) => {
    parseQuery(c, noQuery);
    return sendJson(c, docJson, { 'Cache-Control': 'public, max-age=300' });
  });

  app.get('/docs', (c) => {
    parseQuery(c, noQuery);
    return c.html(docHtml, 200, { 'Cache-Control': 'public, max-age=300' });
  });
}
