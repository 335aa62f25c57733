import { clientKey } from '@vault-yield/reader';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  adminHeaders,
  blockHashOf,
  errorCode,
  insertLedger,
  insertSnapshots,
  makeSnapshot,
  randomHash,
  startReader,
  TEST_ADMIN_TOKEN,
  type TestReader,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The reader under hostile use (issue 27, item 5): buckets that a rotating IPv6 host cannot
 * escape, preflights that count, one client's burst that cannot starve the pool, a screen id
 * that cannot break a header, the pages' security headers, the operators' routes closed to the
 * public. The test's own connections (127.0.0.1) stand for the proxy in front of the reader.
 */

const proxied = { trustedProxies: { kind: 'cidrs', cidrs: ['127.0.0.1'] } } as const;
const from = (address: string, extra: Record<string, string> = {}) => ({
  'X-Forwarded-For': address,
  ...extra,
});

describe('reader under hostile use', () => {
  let db: TestDatabase;
  let w: Writer;
  const S = makeSnapshot();

  beforeAll(async () => {
    db = await createTestDatabase('reader-hostile');
    w = writer(db.writerUrl, db.schema);
    await insertSnapshots(w, [S]);
    await insertLedger(w, [
      { vault: S.vault, type: 'deposit', blockNumber: 10, txHash: randomHash(), blockHash: blockHashOf(10) },
    ]);
  });
  afterAll(async () => {
    await w?.end();
    await db?.drop();
  });

  it('client keys: IPv4 per address, IPv6 per /64, IPv4-mapped IPv6 as its IPv4 address', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('203.0.113.8')).toBe('203.0.113.8');
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:cb00:7107')).toBe('203.0.113.7');
    expect(clientKey('0:0:0:0:0:ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey('unknown')).toBe('unknown');
  });

  it('a /64 rotating its addresses shares one bucket (429); another /64 and IPv4 neighbours do not', async () => {
    const r = await startReader(db, { rateLimit: { ratePerSecond: 0.001, burst: 3, ...proxied } });
    try {
      const path = `/v1/vault/${S.vault}/snapshot`;
      const codes: number[] = [];
      for (let i = 0; i < 6; i++)
        codes.push((await r.get(path, from(`2001:db8:aa:bb:${(i + 1).toString(16)}::${i + 7}`))).status);
      expect(codes).toEqual([200, 200, 200, 429, 429, 429]);
      const limited = await r.get(path, from('2001:db8:aa:bb:ffff:ffff:ffff:fffe'));
      expect(limited.status).toBe(429);
      expect(errorCode(limited)).toBe('rate_limited');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // The next /64 is another client.
      expect((await r.get(path, from('2001:db8:aa:bc::1'))).status).toBe(200);
      // IPv4 stays per address; its IPv4-mapped spelling is the same client.
      for (let i = 0; i < 3; i++) expect((await r.get(path, from('198.51.100.1'))).status).toBe(200);
      expect((await r.get(path, from('::ffff:198.51.100.1'))).status).toBe(429);
      expect((await r.get(path, from('198.51.100.2'))).status).toBe(200);
    } finally {
      await r.stop();
    }
  });

  it('CORS preflights take a token like any request', async () => {
    const r = await startReader(db, { rateLimit: { ratePerSecond: 0.001, burst: 3, ...proxied } });
    try {
      const pre = {
        Origin: 'https://dash.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'if-none-match',
      };
      const codes: number[] = [];
      for (let i = 0; i < 4; i++)
        codes.push((await r.request('OPTIONS', '/v1/strategies', from('192.0.2.50', pre))).status);
      expect(codes).toEqual([204, 204, 204, 429]);
      // The bucket is the same for its GETs, and a limited answer still names the allowed origin.
      const after = await r.get('/v1/strategies', from('192.0.2.50', { Origin: 'https://dash.example' }));
      expect(after.status).toBe(429);
      expect(after.headers.get('access-control-allow-origin')).toBe('*');
    } finally {
      await r.stop();
    }
  });

  it("one client's burst of 40 slow requests leaves another client's requests 200", async () => {
    const r = await startReader(db, {
      rateLimit: { ratePerSecond: 1000, burst: 1000, ...proxied },
      poolMax: 10,
      connectTimeoutMs: 1_500,
      statementTimeoutMs: 20_000,
      concurrency: { perClient: 2, queue: 4 },
    });
    // The ledger locked: every events request of the burst waits in Postgres, holding a connection.
    const lock = await w.connect();
    await lock.query('begin');
    await lock.query('lock table ledger in access exclusive mode');
    let burst: Promise<Awaited<ReturnType<TestReader['get']>>[]> | undefined;
    try {
      const hog = from('203.0.113.66');
      let answered = 0;
      burst = Promise.all(
        Array.from({ length: 40 }, () =>
          r.get(`/v1/vault/${S.vault}/events`, hog).finally(() => {
            answered++;
          }),
        ),
      );
      // The burst is in once everything beyond its cap and queue was answered (refused at once);
      // with the ledger locked nothing else can be. (A fixed wait let late requests of a slow
      // run find the lock gone and the cap free.)
      for (const until = Date.now() + 30_000; answered < 34; ) {
        if (Date.now() > until)
          throw new Error(`only ${answered} of the burst answered while the ledger was locked`);
        await new Promise((res) => setTimeout(res, 20));
      }
      expect(answered).toBe(34);
      // Connections of the reader's pool waiting on the lock: the hog's, at most its cap (2
      // requests, each with its two queries).
      const waiting = await w.query<{ n: number }>(
        `select count(*)::int as n from pg_locks where not granted and relation = 'ledger'::regclass`,
      );
      expect(waiting.rows[0]!.n).toBeGreaterThan(0);
      expect(waiting.rows[0]!.n).toBeLessThanOrEqual(4);
      // Another client is served meanwhile, again and again.
      const other = from('198.51.100.99');
      for (const path of [
        `/v1/vault/${S.vault}/snapshot`,
        '/v1/strategies',
        '/v1/vaults',
        `/v1/vault/${S.vault}/snapshot`,
      ])
        expect((await r.get(path, other)).status, path).toBe(200);
    } finally {
      await lock.query('rollback');
      lock.release();
    }
    const results = await burst!;
    const statuses = results.map((x) => x.status);
    // Its cap and queue served, the rest refused at once with Retry-After.
    expect(statuses.filter((s) => s === 200).length).toBe(6);
    const refused = results.filter((x) => x.status === 429);
    expect(refused.length).toBe(34);
    for (const x of refused) {
      expect(errorCode(x)).toBe('rate_limited');
      expect(Number(x.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    await r.stop();
  });

  it('the concurrency cap defaults to a quarter of the pool (at least 1)', async () => {
    const { readerConfigFromEnv } = await import('@vault-yield/reader');
    const env = { DATABASE_URL: 'postgres://r@127.0.0.1/db' };
    expect(readerConfigFromEnv(env).concurrency).toEqual({ perClient: 2, queue: 16 });
    expect(readerConfigFromEnv({ ...env, PG_POOL_MAX: '40' }).concurrency.perClient).toBe(10);
    expect(readerConfigFromEnv({ ...env, PG_POOL_MAX: '2' }).concurrency.perClient).toBe(1);
    expect(readerConfigFromEnv({ ...env, CLIENT_CONCURRENCY: '0' }).concurrency.perClient).toBe(0);
  });

  it('a screen id that is no valid header value (CR/LF) is a 400 invalid_request, not a 500', async () => {
    const r = await startReader(db);
    try {
      await w.query(
        `insert into screen_meta (id, version, screened_at, updated_at) values (true, $1, 1, 1)
         on conflict (id) do update set version = excluded.version`,
        ['s-1\r\nSet-Cookie: pwned=1'],
      );
      for (const path of ['/v1/universe', '/v1/universe/pairs']) {
        const res = await r.get(path);
        expect(res.status, path).toBe(400);
        expect(errorCode(res)).toBe('invalid_request');
        expect(res.headers.get('set-cookie')).toBeNull();
      }
      await w.query(`update screen_meta set version = $1`, ['screen-2025-01-01T00:00:00Z']);
      const ok = await r.get('/v1/universe');
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-screen-version')).toBe('screen-2025-01-01T00:00:00Z');
    } finally {
      await w.query('delete from screen_meta');
      await r.stop();
    }
  });

  it('/dashboard and /docs carry CSP default-src self, frame-ancestors none, nosniff', async () => {
    const r = await startReader(db);
    try {
      for (const path of ['/dashboard', '/dashboard/app.css', '/docs', '/docs/scalar.js']) {
        const res = await fetch(`${r.url}${path}`);
        expect(res.status, path).toBe(200);
        const csp = res.headers.get('content-security-policy') ?? '';
        expect(csp, path).toMatch(/(^|; )default-src 'self'(;|$)/);
        expect(csp, path).toMatch(/(^|; )frame-ancestors 'none'(;|$)/);
        expect(csp, path).not.toMatch(/https?:|\*/);
        expect(res.headers.get('x-frame-options'), path).toBe('DENY');
        expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
        await res.arrayBuffer();
      }
      // The docs page's inline script is allowed by its hash, not by 'unsafe-inline'.
      const docs = await fetch(`${r.url}/docs`);
      expect(docs.headers.get('content-security-policy')).toMatch(
        /script-src 'self'( 'sha256-[A-Za-z0-9+/=]+')+(;|$)/,
      );
      await docs.text();
      // The API's answers are never sniffed either.
      const api = await fetch(`${r.url}/v1/strategies`);
      expect(api.headers.get('x-content-type-options')).toBe('nosniff');
      await api.text();
    } finally {
      await r.stop();
    }
  });

  it('/metrics: refused without the admin token (401), served with it; none configured: refused', async () => {
    const r = await startReader(db);
    try {
      for (const headers of [
        {},
        { Authorization: 'Bearer wrong-token-0123456789' },
        { Authorization: TEST_ADMIN_TOKEN },
      ]) {
        const res = await r.get('/metrics', { Authorization: '', ...headers });
        expect(res.status).toBe(401);
        expect(errorCode(res)).toBe('unauthorized');
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
        expect(res.text).not.toContain('http_requests_total');
      }
      const ok = await r.get('/metrics', adminHeaders);
      expect(ok.status).toBe(200);
      expect(ok.text).toContain('http_requests_total');
    } finally {
      await r.stop();
    }
    const open = await startReader(db, { adminToken: undefined });
    try {
      const res = await open.get('/metrics', adminHeaders);
      expect(res.status).toBe(401);
      expect(errorCode(res)).toBe('unauthorized');
    } finally {
      await open.stop();
    }
  });

  it("/ready: its status code for everyone, its details only for the admin token's holder", async () => {
    const r = await startReader(db);
    try {
      const anonymous = await r.get('/ready', { Authorization: '' });
      expect(anonymous.status).toBe(200);
      expect(anonymous.body).toEqual({ status: 'ready' });
      const admin = await r.get('/ready', adminHeaders);
      expect(admin.status).toBe(200);
      expect(admin.body).toMatchObject({
        status: 'ready',
        schema: db.schema,
        deadLetters: 0,
        vaultsBehind: 0,
      });
    } finally {
      await r.stop();
    }
    // Not ready: 503 for everyone; the reason only for the admin.
    const behind = await startReader(db, { schema: 'not_migrated' });
    try {
      const anonymous = await behind.get('/ready', { Authorization: '' });
      expect(anonymous.status).toBe(503);
      expect((anonymous.body as { error: { message: string } }).error.message).toBe('not ready');
      const admin = await behind.get('/ready', adminHeaders);
      expect(admin.status).toBe(503);
      expect((admin.body as { error: { message: string } }).error.message).toMatch(/not_migrated/);
    } finally {
      await behind.stop();
    }
  });
});
