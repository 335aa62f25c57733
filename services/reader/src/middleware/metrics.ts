import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  middleware: MiddlewareHandler;
}

/**
 * Request count and latency by route pattern (never the raw path: bounded label values), method
 * and status, in a registry of the reader's own so several readers in one process don't clash;
 * with the process's default metrics under their stock names (`process_*`, `nodejs_*`: the job
 * label tells the services apart) unless `defaults` is false.
 */
export function createMetrics(defaults = true): Metrics {
  const registry = new Registry();
  if (defaults) collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests served, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to produce the response, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests being handled now',
    registers: [registry],
  });
  const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

  const middleware: MiddlewareHandler = async (c, next) => {
    const start = process.hrtime.bigint();
    inFlight.inc();
    try {
      await next();
    } finally {
      inFlight.dec();
      const route = routePath(c, -1);
      const labels = {
        // The last matched route is the handler's; a middleware pattern means nothing matched.
        route: route === '*' || route === '/*' ? 'unmatched' : route,
        method: KNOWN_METHODS.has(c.req.method) ? c.req.method : 'OTHER',
        status: String(c.res.status),
      };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    }
  };
  return { registry, middleware };
}
