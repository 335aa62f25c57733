import { createServer, type Server } from 'node:http';
import { CONFIG_DEFAULTS } from '../config/defaults.js';

/** What a Prometheus registry gives a scrape (prom-client's `Registry` has both). */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}

const json = (status: number, body: string) => ({ status, body, type: 'application/json' });

/** A process's own health for `GET /health`: ok (200, `status` its state) or not (503, the reason). */
export type HealthCheck = () => { ok: true; status: string } | { ok: false; reason: string };

/**
 * The one metrics server of the background processes (indexer, projector, webhooks deliverer):
 * `GET /metrics` (the registry, Prometheus text) and `GET /health` (200 `{"status":"ok"}` while
 * the process serves; compose's healthchecks — or, given `health`, 200 with its status or 503
 * `{"status":"unavailable","reason":…}` while it cannot work), anything else 404 in the API's error shape. By
 * default on loopback only, so the figures are not public unless METRICS_HOST says where they
 * may be scraped from (e.g. `0.0.0.0` in a container whose port only the scraper reaches).
 */
export function serveMetrics(
  registry: MetricsSource,
  port: number,
  host: string = CONFIG_DEFAULTS.metricsHost,
  health?: HealthCheck,
): Promise<Server> {
  const server = createServer((req, res) => {
    const send = (r: { status: number; body: string; type: string }) => {
      res.writeHead(r.status, { 'content-type': r.type });
      res.end(r.body);
    };
    if (req.method === 'GET' && req.url === '/metrics') {
      registry.metrics().then(
        (body) => send({ status: 200, body, type: registry.contentType }),
        () => send(json(500, '{"error":{"code":"internal","message":"metrics unavailable"}}')),
      );
      return;
    }
    if (req.method === 'GET' && req.url === '/health') {
      const h = health?.() ?? { ok: true, status: 'ok' };
      return send(
        h.ok
          ? json(200, JSON.stringify({ status: h.status }))
          : json(503, JSON.stringify({ status: 'unavailable', reason: h.reason })),
      );
    }
    send(
      json(404, '{"error":{"code":"not_found","message":"only GET /metrics and /health are served here"}}'),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
