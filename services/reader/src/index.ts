import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { OpenAPIHono } from '@hono/zod-openapi';
import { type Context, createLogger, type Logger } from '@vault-yield/common';
import { checkRoleSettings, createPgPool, type Pool } from '@vault-yield/store';
import { compress } from 'hono/compress';
import { methodNotAllowed } from 'hono/method-not-allowed';
import type { Registry } from 'prom-client';
import type { ReaderConfig } from './config.js';
import { DASHBOARD_CSP, dashboardRoutes } from './dashboard/index.js';
import { ApiError, errorResponse, isUnavailable } from './errors.js';
import { createFreshnessProbe } from './freshness.js';
import { createConcurrencyLimiter } from './middleware/concurrency.js';
import { type ConnectionStats, createConnectionCap } from './middleware/connection-cap.js';
import { corsHeaders, corsPreflight } from './middleware/cors.js';
import { createMetrics } from './middleware/metrics.js';
import { createClientKey, rateLimit } from './middleware/rate-limit.js';
import { noSniff, pageHeaders } from './middleware/security-headers.js';
import { DOCS_CSP } from './openapi/docs.js';
import { buildOpenApi } from './openapi/document.js';
import { catalogueRoutes } from './routes/catalogue.js';
import type { RouteDeps } from './routes/deps.js';
import { type OpsDeps, opsRoutes } from './routes/ops.js';
import { type StreamDeps, streamRoutes } from './routes/stream.js';
import { vaultRoutes } from './routes/vault.js';
import { createStreamHub, type StreamHub } from './stream/hub.js';

export {
  type ReaderConfig,
  readerConfig,
  readerConfigFromEnv,
  readerEnvSchema,
} from './config.js';
export { clientKey, clientKeys } from './middleware/client-address.js';
export type { ConnectionStats, RefusalReason } from './middleware/connection-cap.js';
export { createMetrics as createReaderMetrics } from './middleware/metrics.js';
export { lpFiguresDoc } from './openapi/lp-figures.js';
export { readInterfaceDoc } from './openapi/read-interface-doc.js';
export { routes } from './openapi/routes.js';
export { encodeStreamCursor, LIMITS, parseStreamCursor, parseTime, type StreamCursor } from './params.js';
export * as schemas from './schemas.js';
export { SNAPSHOTS_PER_READ, type StreamHub } from './stream/hub.js';

/** Every route of the reader, declared once (openapi/routes.ts), with its handler. */
function declareApi(deps: RouteDeps, ops: Omit<OpsDeps, keyof RouteDeps>, live: StreamDeps) {
  return new OpenAPIHono()
    .route('/', vaultRoutes(deps))
    .route('/', streamRoutes(deps, live))
    .route('/', catalogueRoutes(deps))
    .route('/', opsRoutes({ ...deps, ...ops }))
    .route('/', dashboardRoutes());
}

export interface Reader {
  app: OpenAPIHono;
  pool: Pool;
  registry: Registry;
  log: Logger;
  /** The live streams' hub (one listening connection, the streams' caps). */
  hub: StreamHub;
  /** The server's sockets: open now, and refused at accept by cap (the metrics' figures). */
  connections(): ConnectionStats;
  /** Listens on config.host:config.port (0 = any free port); resolves with the bound address. */
  start(): Promise<{ host: string; port: number; url: string }>;
  /** Stops accepting, drains in-flight requests (up to shutdownGraceMs), closes the pool. */
  stop(): Promise<void>;
}

const EXPOSED = [
  'ETag',
  'Link',
  'X-Next-Cursor',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'X-Screen-Version',
  'X-Screened-At',
];

/**
 * The reader of `config`, handed the process's context (its logger and registry); without one (a
 * test, a bench), its own logger (`config.logger`, else one from the config) and registry.
 */
export function createReader(config: ReaderConfig, ctx?: Context): Reader {
  const log =
    ctx?.log ??
    config.logger ??
    createLogger({ name: 'reader', level: config.logLevel, format: config.logFormat });
  const pool = createPgPool({
    url: config.databaseUrl,
    schema: config.schema,
    applicationName: 'vault-yield-reader',
    max: config.poolMax,
    statementTimeoutMs: config.statementTimeoutMs,
    connectionTimeoutMs: config.connectTimeoutMs,
    pooling: config.pooling,
  });
  const freshness = createFreshnessProbe({
    pool,
    schema: config.schema,
    config: config.freshness,
    log: log.child({ component: 'freshness' }),
  });
  let draining = false;
  const hub = createStreamHub({
    pool,
    // LISTEN holds a session: straight to Postgres when the pool goes through a pooler.
    databaseUrl: config.directUrl ?? config.databaseUrl,
    schema: config.schema,
    log,
    ...config.streams,
  });
  // One host may not hold every socket (HTTP_MAX_CONNECTIONS): a cap per address, at accept.
  const connectionCap = createConnectionCap(
    config.connections,
    config.rateLimit.trustedProxies,
    log.child({ component: 'connections' }),
  );
  const metrics = createMetrics(
    ctx?.metrics ?? true,
    () => freshness.read(),
    () => hub.stats(),
    () => connectionCap.stats(),
  );

  const app = new OpenAPIHono();
  const cors = { origins: config.corsOrigins, exposeHeaders: EXPOSED, maxAgeS: 600 };
  app.use('*', metrics.middleware);
  app.use('*', noSniff);
  // The allowed origin goes on every answer, a 429 included (a page can read why it failed).
  app.use('*', corsHeaders(cors));
  // Every route is limited per client (/ready queries Postgres; /metrics and /docs cost CPU),
  // preflights included, except /health, answered from memory for liveness probes. A client is
  // an IPv4 address or an IPv6 /64 (middleware/client-address.ts).
  const exempt = ['/health'];
  const clientKey = createClientKey(config.rateLimit.trustedProxies);
  app.use('*', rateLimit({ ...config.rateLimit, exempt }));
  app.use('*', corsPreflight(cors));
  // One client's burst of slow requests may not take the whole Postgres pool. A live stream holds
  // a slot while it opens (its handler's reads) and for each read after (withSlot), not between.
  const concurrency = createConcurrencyLimiter(
    { ...config.concurrency, trustedProxies: config.rateLimit.trustedProxies, exempt },
    clientKey,
  );
  app.use('*', concurrency.middleware);
  // The pages and their assets: CSP (nothing from elsewhere), no framing.
  const dashboardHeaders = pageHeaders(DASHBOARD_CSP);
  const docsHeaders = pageHeaders(DOCS_CSP);
  app.use('*', (c, next) => {
    const p = c.req.path;
    if (p === '/dashboard' || p.startsWith('/dashboard/')) return dashboardHeaders(c, next);
    if (p === '/docs' || p.startsWith('/docs/')) return docsHeaders(c, next);
    return next();
  });
  app.use('*', compress());
  app.use(
    '*',
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) =>
        errorResponse(
          c,
          405,
          'method_not_allowed',
          `method ${c.req.method.slice(0, 16)} not allowed; use GET`,
          {
            Allow: methods.join(', '),
          },
        ),
    }),
  );
  app.use('*', async (c, next) => {
    await next();
    if (draining) c.header('Connection', 'close');
  });

  app.route(
    '/',
    declareApi(
      { pool, config, log },
      {
        registry: metrics.registry,
        doc: () => buildOpenApi(app),
        draining: () => draining,
        freshness,
      },
      { hub, clientKey, withSlot: concurrency.withSlot },
    ),
  );
  if (config.benchRoutes) app.get('/bench/hello', (c) => c.text('hello world'));

  app.notFound((c) => {
    const path = c.req.path.length > 200 ? `${c.req.path.slice(0, 200)}…` : c.req.path;
    return errorResponse(c, 404, 'not_found', `no route for ${path}`);
  });
  app.onError((err, c) => {
    if (err instanceof ApiError)
      return errorResponse(c, err.status, err.code, err.message, err.headers, err.detail);
    if (isUnavailable(err)) {
      log.warn(
        { err: { message: err.message, code: (err as { code?: string }).code } },
        'database unavailable',
      );
      return errorResponse(c, 503, 'unavailable', 'database unavailable; retry later', {
        'Retry-After': '1',
      });
    }
    log.error({ err, path: c.req.path }, 'unhandled error');
    return errorResponse(c, 500, 'internal', 'internal error');
  });

  let server: Server | undefined;

  return {
    app,
    pool,
    registry: metrics.registry,
    log,
    hub,
    connections: () => connectionCap.stats(),
    start: async () => {
      // Behind a transaction-mode pooler the role's settings stand in for the connect options.
      if (config.pooling === 'transaction')
        await checkRoleSettings(pool, {
          schema: config.schema,
          statementTimeoutMs: config.statementTimeoutMs,
        });
      return new Promise((resolve, reject) => {
        hub.start();
        const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, maxConnections } = config.http;
        const s = serve(
          {
            fetch: app.fetch,
            port: config.port,
            hostname: config.host,
            serverOptions: {
              headersTimeout: headersTimeoutMs,
              requestTimeout: requestTimeoutMs,
              keepAliveTimeout: keepAliveTimeoutMs,
              // How often the time-outs above are enforced (Node's default is every 30 s).
              connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
            },
          },
          (info: AddressInfo) => {
            const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
            log.info({ host: info.address, port: info.port }, 'reader listening');
            resolve({ host: info.address, port: info.port, url: `http://${host}:${info.port}` });
          },
        ) as Server;
        s.keepAliveTimeout = keepAliveTimeoutMs;
        s.maxConnections = maxConnections;
        // Before any connection is accepted (listen completes on a later turn of the loop).
        connectionCap.attach(s);
        s.once('error', reject);
        server = s;
      });
    },
    stop: async () => {
      draining = true;
      const s = server;
      server = undefined;
      // Stop accepting at once; in-flight requests drain (up to the grace period).
      const closed = s
        ? new Promise<void>((resolve) => {
            const force = setTimeout(() => s.closeAllConnections(), config.shutdownGraceMs);
            force.unref();
            s.close(() => {
              clearTimeout(force);
              resolve();
            });
            s.closeIdleConnections();
          })
        : Promise.resolve();
      // Live streams end now: they would hold the server open until the grace period.
      await hub.stop();
      await closed;
      await freshness.close();
      await pool.end();
      log.info('reader stopped');
    },
  };
}
