import { createLogger } from '@vault-yield/common';
import { activityTypes } from '@vault-yield/domain';
import { createReader, readerConfig } from '@vault-yield/reader';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  errorCode,
  insertSnapshots,
  makeSnapshot,
  randomAddress,
  startReader,
  type TestReader,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const silent = createLogger({ name: 'reader-test', level: 'silent' });

describe('operations, errors, limits, document', () => {
  let db: TestDatabase;
  let w: Writer;
  let r: TestReader;
  const S = makeSnapshot();

  beforeAll(async () => {
    db = await createTestDatabase('reader-ops');
    w = writer(db.writerUrl, db.schema);
    await insertSnapshots(w, [S]);
    r = await startReader(db);
  });
  afterAll(async () => {
    await r?.stop();
    await w?.end();
    await db?.drop();
  });

  it('/health is 200 whatever the database does', async () => {
    const res = await r.get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('/ready: 200 when migrations are current, 503 when the schema is behind', async () => {
    const ok = await r.get('/ready');
    expect(ok.status).toBe(200);
    const latest = (ok.body as { migration: number }).migration;
    expect(latest).toBeGreaterThanOrEqual(2);

    const { rows } = await w.query('select version, name from schema_migrations where version = $1', [
      latest,
    ]);
    await w.query('delete from schema_migrations where version = $1', [latest]);
    try {
      const behind = await r.get('/ready');
      expect(behind.status).toBe(503);
      expect(errorCode(behind)).toBe('unavailable');
      expect((behind.body as { error: { message: string } }).error.message).toMatch(/expected/);
    } finally {
      await w.query('insert into schema_migrations (version, name) values ($1, $2)', [latest, rows[0].name]);
    }
    expect((await r.get('/ready')).status).toBe(200);
  });

  it('/ready is 503 for a schema that was never migrated', async () => {
    const other = await startReader(db, { schema: 'not_migrated' });
    try {
      const res = await other.get('/ready');
      expect(res.status).toBe(503);
      expect(errorCode(res)).toBe('unavailable');
    } finally {
      await other.stop();
    }
  });

  it('Postgres down: data routes 503 unavailable (no stack), /ready 503, /health 200', async () => {
    const down = await startReader(db, {
      databaseUrl: 'postgres://vault_yield_reader@127.0.0.1:1/nowhere',
      connectTimeoutMs: 500,
    });
    try {
      for (const p of [
        `/v1/vault/${S.vault}/snapshot`,
        `/v1/vault/${S.vault}/events`,
        '/v1/strategies',
        '/v1/vaults',
      ]) {
        const res = await down.get(p);
        expect(res.status, p).toBe(503);
        expect(errorCode(res)).toBe('unavailable');
        expect(res.headers.get('retry-after')).toBe('1');
      }
      expect((await down.get('/ready')).status).toBe(503);
      expect((await down.get('/health')).status).toBe(200);
    } finally {
      await down.stop();
    }
  });

  it('unknown routes → 404 not_found; other methods on known routes → 405 with Allow', async () => {
    for (const p of [
      '/',
      '/v1',
      '/v2/strategies',
      '/v1/vault',
      `/v1/vault/${S.vault}`,
      `/v1/vault/${S.vault}/snapshot/x`,
      '/v1/strategies/',
    ]) {
      const res = await r.get(p);
      expect(res.status, p).toBe(404);
      expect(errorCode(res)).toBe('not_found');
    }
    for (const m of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const p of ['/v1/strategies', `/v1/vault/${S.vault}/snapshot`, '/health']) {
        const res = await r.request(m, p);
        expect(res.status, `${m} ${p}`).toBe(405);
        expect(errorCode(res)).toBe('method_not_allowed');
        expect(res.headers.get('allow')).toBe('GET, HEAD');
      }
    }
    expect((await r.request('POST', '/v1/nothing')).status).toBe(404);
  });

  it('a request head over 16 KiB is refused by the HTTP server (431), before the application', async () => {
    const res = await fetch(`${r.url}/v1/vaults?owner=${'a'.repeat(20_000)}`);
    expect(res.status).toBe(431);
  });

  it('CORS with configured origins: only those are allowed, Vary: Origin', async () => {
    const limited = await startReader(db, { corsOrigins: ['https://dash.example'] });
    try {
      const ok = await limited.get('/v1/strategies', { Origin: 'https://dash.example' });
      expect(ok.headers.get('access-control-allow-origin')).toBe('https://dash.example');
      expect(ok.headers.get('vary')).toMatch(/Origin/);
      const other = await limited.get('/v1/strategies', { Origin: 'https://evil.example' });
      expect(other.status).toBe(200);
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const pre = await limited.request('OPTIONS', '/v1/strategies', {
        Origin: 'https://dash.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'if-none-match',
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('https://dash.example');
      expect(pre.headers.get('access-control-allow-headers')).toBe('if-none-match');
    } finally {
      await limited.stop();
    }
  });

  it('a server fault gives 500 internal with the error shape and no stack trace', async () => {
    const reader = createReader(readerConfig(db.readerUrl, { schema: db.schema, port: 0, logger: silent }));
    reader.app.get('/test/boom', () => {
      throw new Error('secret internals at /work/main/x.ts:12');
    });
    try {
      const res = await reader.app.request('/test/boom');
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ error: { code: 'internal', message: 'internal error' } });
      expect(text).not.toMatch(/secret|\.ts/);
    } finally {
      await reader.stop();
    }
  });

  it('rate limit: per-client token bucket → 429 rate_limited with Retry-After and RateLimit headers', async () => {
    const limited = await startReader(db, {
      // The test's own connections (127.0.0.1) stand for the proxy in front of the reader.
      rateLimit: { ratePerSecond: 0.001, burst: 3, trustedProxies: { kind: 'cidrs', cidrs: ['127.0.0.1'] } },
    });
    try {
      const path = `/v1/vault/${S.vault}/snapshot`;
      const a = { 'X-Forwarded-For': '203.0.113.7' };
      const statuses: number[] = [];
      let last: Awaited<ReturnType<TestReader['get']>> | undefined;
      for (let i = 0; i < 4; i++) {
        last = await limited.get(path, a);
        statuses.push(last.status);
        if (i === 0) {
          expect(last.headers.get('ratelimit-limit')).toBe('3');
          expect(last.headers.get('ratelimit-remaining')).toBe('2');
        }
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(errorCode(last!)).toBe('rate_limited');
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(last!.headers.get('ratelimit-remaining')).toBe('0');
      // Another client has its own bucket; /health (from memory, for probes) is never limited.
      expect((await limited.get(path, { 'X-Forwarded-For': '198.51.100.1, 10.0.0.1' })).status).toBe(200);
      expect((await limited.get('/health', a)).status).toBe(200);
      expect((await limited.get('/v1/nothing', a)).status).toBe(429); // every request counts
      // Operational routes that cost something share the client's bucket.
      for (const ops of ['/ready', '/metrics', '/docs', '/openapi.json'])
        expect((await limited.get(ops, a)).status, ops).toBe(429);
      // Rotating the client-written part of X-Forwarded-For buys no fresh bucket.
      for (let i = 0; i < 5; i++)
        expect((await limited.get(path, { 'X-Forwarded-For': `192.0.2.${i}, 203.0.113.7` })).status).toBe(
          429,
        );
    } finally {
      await limited.stop();
    }
  });

  it('rate limit ignores X-Forwarded-For unless the proxy is trusted', async () => {
    const limited = await startReader(db, {
      rateLimit: { ratePerSecond: 0.001, burst: 3, trustedProxies: { kind: 'none' } },
    });
    try {
      // startReader's own GET /openapi.json took the first token of 127.0.0.1's bucket.
      const codes: number[] = [];
      for (let i = 0; i < 3; i++)
        codes.push((await limited.get('/v1/strategies', { 'X-Forwarded-For': `192.0.2.${i}` })).status);
      expect(codes).toEqual([200, 200, 429]);
    } finally {
      await limited.stop();
    }
  });

  it('/metrics: request counts and latency by route pattern and status (no raw paths)', async () => {
    await r.get(`/v1/vault/${S.vault}/snapshot`);
    await r.get(`/v1/vault/${randomAddress()}/snapshot`);
    await r.get('/nowhere/at/all');
    const res = await r.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toMatch(
      /http_requests_total\{route="\/v1\/vault\/:vault\/snapshot",method="GET",status="200"\} \d+/,
    );
    expect(res.text).toMatch(
      /http_requests_total\{route="\/v1\/vault\/:vault\/snapshot",method="GET",status="404"\} \d+/,
    );
    expect(res.text).toMatch(/http_requests_total\{route="unmatched",method="GET",status="404"\}/);
    expect(res.text).toMatch(
      /http_request_duration_seconds_bucket\{le="0.005",route="\/v1\/vault\/:vault\/snapshot"/,
    );
    expect(res.text).not.toContain(S.vault);
    expect(res.text).not.toContain('nowhere');
  });

  it('/openapi.json documents every endpoint and every decision the seed leaves open', async () => {
    const res = await r.get('/openapi.json');
    const doc = res.body as {
      openapi: string;
      info: { description: string };
      paths: Record<string, { get: { parameters: { name: string; schema: Record<string, unknown> }[] } }>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/v1/vault/{vault}/snapshot',
        '/v1/vault/{vault}/equity',
        '/v1/vault/{vault}/events',
        '/v1/tx/{hash}',
        '/v1/vault/{vault}/stream',
        '/v1/stream',
        '/v1/vaults',
        '/v1/chains',
        '/v1/strategies',
        '/v1/universe',
        '/v1/universe/pairs',
        '/health',
        '/ready',
        '/metrics',
        '/openapi.json',
        '/docs',
      ].sort(),
    );
    const d = doc.info.description;
    for (const decision of [
      /0x. followed by 40 hex digits, any case/, // address format
      /Unix time in\s+\*\*milliseconds\*\*/, // ts / updatedAt unit
      /\*\*inclusive\*\*.*\*\*exclusive\*\*/s, // since / until
      /default\s+50, 1–500/, // limit
      /400, not clamped/,
      /comma-separated/, // type list
      /X-Next-Cursor/, // cursor
      /oldest first/, // equity order
      /at most `points` points \(default 200, 1–1000/, // equity resolution
      /returned \*\*whole\*\*/, // catalogue pagination
      /unknown query parameter is a 400/,
      /## Authentication\nNone/, // auth
      /## Versioning\nAll resources live under the `\/v1`/, // versioning
      /Retry-After/, // rate limit
      /"error": \{ "code"/, // error payload
      /not part of this API/, // write operations
      /Push delivery .* is not offered/s, // push
      /contributedUsd/, // fees definitions
      /first match wins/, // status table
    ])
      expect(d).toMatch(decision);
    for (const t of activityTypes) expect(d).toContain(`\`${t}\``);
    const events = doc.paths['/v1/vault/{vault}/events']!.get.parameters.map((p) => p.name);
    expect(events).toEqual(['vault', 'type', 'since', 'until', 'limit', 'cursor']);
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'Snapshot',
        'EquityPoint',
        'LedgerRow',
        'Strategy',
        'UniverseAsset',
        'UniversePair',
        'VaultSummary',
        'Error',
      ]),
    );
  });

  it('/docs is the interactive reference (Scalar) reading /openapi.json, its bundle served here (no CDN)', async () => {
    const res = await r.get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('<script src="/docs/scalar.js"></script>');
    expect(res.text).toContain('"url":"/openapi.json"');
    expect(res.text).toContain('"withDefaultFonts":false'); // fonts come from a CDN otherwise
    expect(res.text).toContain('"showDeveloperTools":"never"'); // its menus lead to scalar.com
    expect(res.text).not.toMatch(/https?:\/\//); // nothing fetched from elsewhere
    // The bundle: the installed @scalar/api-reference's standalone build, cacheable, with a 304.
    const bundle = await fetch(`${r.url}/docs/scalar.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/^text\/javascript/);
    const etag = bundle.headers.get('etag')!;
    expect((await bundle.text()).length).toBeGreaterThan(1_000_000);
    const again = await fetch(`${r.url}/docs/scalar.js`, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    // Compressed once, not per request: gzip when accepted, the same bytes as identity otherwise.
    expect(bundle.headers.get('content-encoding')).toBe('gzip');
    expect(bundle.headers.get('vary')).toBe('Accept-Encoding');
    const plain = await fetch(`${r.url}/docs/scalar.js`, { headers: { 'Accept-Encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(plain.headers.get('etag')).not.toBe(etag);
    expect(Number(plain.headers.get('content-length'))).toBeGreaterThan(1_000_000);
  });

  it('the OpenAPI document is large enough to be compressed', async () => {
    const res = await fetch(`${r.url}/openapi.json`, { headers: { 'Accept-Encoding': 'gzip, deflate' } });
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(((await res.json()) as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('stop(): stops accepting, drains in-flight requests, then closes the pool', async () => {
    const reader = await startReader(db);
    // Hold the snapshot table so the requests below are provably in flight when stop() begins.
    const lock = await w.connect();
    await lock.query('begin');
    await lock.query('lock table vault_snapshot in access exclusive mode');
    let stopped: Promise<void> | undefined;
    try {
      const inflight = Array.from({ length: 10 }, () =>
        fetch(`${reader.url}/v1/vault/${S.vault}/snapshot`).then((res) => res.status),
      );
      // Every request is being handled (the gauge) and the reads wait on the lock.
      const gauge = reader.reader.registry.getSingleMetric('http_requests_in_flight')!;
      // Bounded: a reader that never takes the requests in (or never reaches the table) fails here
      // with what was seen, instead of hanging until the test's time-out.
      for (let tries = 0; ; tries++) {
        const { rows } = await w.query(
          `select count(*)::int as n from pg_locks where not granted and relation = 'vault_snapshot'::regclass`,
        );
        const handling = (await gauge.get()).values[0]?.value ?? 0;
        if (rows[0].n > 0 && handling === 10) break;
        if (tries >= 2_000)
          throw new Error(
            `requests never all in flight: ${handling} handled, ${rows[0].n} waiting on the lock`,
          );
        await new Promise((res) => setTimeout(res, 10));
      }
      stopped = reader.stop();
      await expect(fetch(`${reader.url}/health`)).rejects.toThrow(); // no longer accepting
      expect(reader.reader.pool.ending).toBe(false); // still draining
      await lock.query('rollback');
      expect(await Promise.all(inflight)).toEqual(Array(10).fill(200));
      await stopped;
      expect(reader.reader.pool.ending).toBe(true);
    } finally {
      await lock.query('rollback').catch(() => {});
      lock.release();
      await stopped?.catch(() => {});
    }
  });
});
