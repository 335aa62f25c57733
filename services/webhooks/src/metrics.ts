import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The deliverer's Prometheus metrics, on their own registry (several deliverers per process in
 * tests), with the process's default metrics under their stock names unless `defaults` is false.
 * `healthy`: what `/health` says, read at each scrape.
 */
export function createWebhookMetrics(
  /** true/false: a registry of its own, with or without the default metrics; a Registry: the process's. */
  defaults: boolean | Registry = true,
  healthy: () => boolean = () => true,
) {
  const registry = defaults instanceof Registry ? defaults : new Registry();
  if (defaults === true) collectDefaultMetrics({ register: registry });
  return {
    registry,
    attempts: new Counter({
      name: 'webhooks_delivery_attempts_total',
      help: 'Delivery attempts by outcome: delivered (2xx), retry (5xx, 408, 429, time-out, connection error: tried again later), parked (other status, or a failure past the retry period)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'webhooks_delivery_duration_seconds',
      help: 'Time from sending a delivery to its answer (or failure)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    scanned: new Counter({
      name: 'webhooks_ledger_rows_scanned_total',
      help: "Ledger rows the endpoints' cursors moved over",
      registers: [registry],
    }),
    queued: new Counter({
      name: 'webhooks_deliveries_queued_total',
      help: 'Deliveries queued (ledger rows that matched an endpoint)',
      registers: [registry],
    }),
    pending: new Gauge({
      name: 'webhooks_deliveries_pending',
      help: 'Deliveries waiting to be delivered (queued or retrying)',
      registers: [registry],
    }),
    parked: new Gauge({
      name: 'webhooks_deliveries_parked',
      help: 'Deliveries parked (`vault-yield webhooks deliveries --failed`; `retry` sends them again)',
      registers: [registry],
    }),
    parkedByEndpoint: new Gauge({
      name: 'webhooks_endpoint_parked',
      help: 'Parked deliveries per endpoint (kept WEBHOOK_PARKED_RETENTION_MS, then deleted): one that keeps growing is a receiver refusing or gone',
      labelNames: ['endpoint'] as const,
      registers: [registry],
    }),
    paused: new Gauge({
      name: 'webhooks_endpoints_paused',
      help: 'Endpoints paused by their circuit breaker (WEBHOOK_BREAKER_FAILURES failures in a row, or failing for WEBHOOK_BREAKER_FAILING_MS): only a probe every WEBHOOK_BREAKER_PROBE_MS is sent to them',
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: 'webhooks_deliveries_in_flight',
      help: 'Deliveries sent and not yet answered',
      registers: [registry],
    }),
    healthy: new Gauge({
      name: 'webhooks_deliverer_healthy',
      help: 'Whether the deliverer can do its work (1) or not (0: the database does not answer, or no round completed within the bound); /health answers 503 then',
      registers: [registry],
      collect() {
        this.set(healthy() ? 1 : 0);
      },
    }),
    active: new Gauge({
      name: 'webhooks_deliverer_active',
      help: 'Whether this deliverer holds the lock and delivers (1) or stands by (0); one per webhooks schema',
      registers: [registry],
    }),
  };
}

export type WebhookMetrics = ReturnType<typeof createWebhookMetrics>;
