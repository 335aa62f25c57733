import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { type ConnectionStats, REFUSAL_REASONS, type RefusalReason } from './connection-cap.js';

export interface Metrics {
  registry: Registry;
  middleware: MiddlewareHandler;
}

/** What the lag gauges report at each scrape (see freshness.ts); null figures leave no sample. */
export type LagSource = () => Promise<{
  records: number | null;
  blocks: number | null;
  seconds: number | null;
}>;

/**
 * Request count and latency by route pattern (never the raw path: bounded label values), method
 * and status, in a registry of the reader's own so several readers in one process don't clash;
 * with the process's default metrics under their stock names (`process_*`, `nodejs_*`: the job
 * label tells the services apart) unless `defaults` is false.
 */
/** The live streams' figures at each scrape (StreamHub.stats). */
export type StreamSource = () => {
  streams: number;
  listening: boolean;
  refused: { total: number; client: number };
  replay: { bytes: number; waitedMs: number; waiting: number };
};

/** The server's sockets at each scrape (ConnectionCap.stats). */
export type ConnectionSource = () => ConnectionStats;

export function createMetrics(
  /** true/false: a registry of its own, with or without the default metrics; a Registry: the process's. */
  defaults: boolean | Registry = true,
  lag?: LagSource,
  streams?: StreamSource,
  connections?: ConnectionSource,
): Metrics {
  const registry = defaults instanceof Registry ? defaults : new Registry();
  if (defaults === true) collectDefaultMetrics({ register: registry });
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
  // The projection's lag, read at each scrape (the same reading as /ready's, at most once a second).
  let scrape: ReturnType<LagSource> | null = null;
  const lagGauge = (unit: 'records' | 'blocks' | 'seconds', help: string) =>
    new Gauge({
      name: `reader_projection_lag_${unit}`,
      help,
      registers: [registry],
      async collect() {
        if (!lag) return;
        // The three gauges of one scrape share one reading.
        scrape ??= lag().finally(() => setTimeout(() => (scrape = null), 0));
        const r = await scrape.catch(() => null);
        const v = r?.[unit] ?? null;
        if (v === null) this.reset();
        else this.set(v);
      },
    });
  lagGauge(
    'records',
    'Records of the log the projection this reader serves has yet to fold (topic high watermarks minus the offsets stored with it); absent without KAFKA_BROKERS',
  );
  lagGauge(
    'blocks',
    "Blocks between the indexer's checkpoint and the newest block the projection folded (0 when no record is left to fold)",
  );
  lagGauge(
    'seconds',
    "Chain time between the indexer's checkpoint and the newest record the projection folded, seconds (0 when no record is left to fold)",
  );
  new Gauge({
    name: 'reader_streams_open',
    help: 'Live streams (server-sent events) open now; refused beyond STREAM_MAX',
    registers: [registry],
    collect() {
      if (streams) this.set(streams().streams);
    },
  });
  new Gauge({
    name: 'reader_streams_listening',
    help: "1 while the streams' LISTEN connection to Postgres is up (commits reach open streams), else 0",
    registers: [registry],
    collect() {
      if (streams) this.set(streams().listening ? 1 : 0);
    },
  });
  // Counted by the hub; the counter catches up with it at each scrape.
  const refusedSeen = { total: 0, client: 0 };
  new Counter({
    name: 'reader_streams_refused_total',
    help: 'Live streams refused with 503, by the cap that refused them: total (STREAM_MAX) or client (STREAM_MAX_PER_CLIENT)',
    labelNames: ['cap'] as const,
    registers: [registry],
    collect() {
      if (!streams) return;
      const now = streams().refused;
      for (const cap of ['total', 'client'] as const) {
        this.inc({ cap }, now[cap] - refusedSeen[cap]);
        refusedSeen[cap] = now[cap];
      }
    },
  });
  new Gauge({
    name: 'reader_streams_replay_waiting',
    help: 'Live streams catching up behind the head that wait for their turn in the replay budget (STREAM_REPLAY_KIB_S) now',
    registers: [registry],
    collect() {
      if (streams) this.set(streams().replay.waiting);
    },
  });
  const replaySeen = { bytes: 0, waitedMs: 0 };
  new Counter({
    name: 'reader_streams_replay_bytes_total',
    help: 'Bytes of JSON read by live streams catching up behind the head, charged to the replay budget (STREAM_REPLAY_KIB_S)',
    registers: [registry],
    collect() {
      if (!streams) return;
      const now = streams().replay.bytes;
      this.inc(now - replaySeen.bytes);
      replaySeen.bytes = now;
    },
  });
  new Counter({
    name: 'reader_streams_replay_wait_seconds_total',
    help: 'Seconds the replay budget held streams catching up behind the head between their pages (summed over streams)',
    registers: [registry],
    collect() {
      if (!streams) return;
      const now = streams().replay.waitedMs;
      this.inc((now - replaySeen.waitedMs) / 1_000);
      replaySeen.waitedMs = now;
    },
  });
  new Gauge({
    name: 'reader_connections_open',
    help: 'Connections (sockets) the HTTP server holds now',
    registers: [registry],
    collect() {
      if (connections) this.set(connections().open);
    },
  });
  const connectionsSeen: Record<RefusalReason, number> = { address: 0, ipv6_56: 0, ipv6_48: 0, total: 0 };
  new Counter({
    name: 'reader_connections_refused_total',
    help: 'Connections reset at accept, by the cap that refused them: address (MAX_CONNECTIONS_PER_ADDRESS: an IPv4 address or IPv6 /64), ipv6_56, ipv6_48 (MAX_CONNECTIONS_PER_IPV6_56/48), total (HTTP_MAX_CONNECTIONS)',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      if (!connections) return;
      const now = connections().refused;
      for (const reason of REFUSAL_REASONS) {
        this.inc({ reason }, now[reason] - connectionsSeen[reason]);
        connectionsSeen[reason] = now[reason];
      }
    },
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
