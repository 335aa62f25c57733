import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ApiError,
  createClient,
  items,
  LEDGER_TYPES,
  type LedgerRow,
  ok,
  pages,
  RETRY_DEFAULTS,
  retryAfterMs,
  searchParams,
  type VaultSummary,
} from './index.js';

/** A fetch that answers from a script and records every URL asked. */
function scripted(...answers: (() => Response)[]) {
  const urls: string[] = [];
  const headers: Headers[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    urls.push(String(input));
    headers.push(new Headers(init?.headers));
    const next = answers.shift();
    if (!next) throw new Error(`unexpected request ${String(input)}`);
    return next();
  };
  return { fetch: fetch as typeof globalThis.fetch, urls, headers };
}
const json =
  (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json', ...headers },
    });
const error = (status: number, code: string, headers: Record<string, string> = {}) =>
  json({ error: { code, message: `${code} here` } }, status, headers);
const vault = (n: number): VaultSummary => ({
  id: `eip155:31337:0x${String(n).padStart(40, '0')}`,
  chainId: 31337,
  vault: `0x${String(n).padStart(40, '0')}`,
  owner: `0x${'1'.repeat(40)}`,
  strategy: 'core',
  status: 'earning',
  valueUsd: n,
  netUsd: 0,
  createdAt: 1,
  updatedAt: 2,
});
const ADDRESS = `0x${'ab'.repeat(20)}`;

describe('requests', () => {
  it('integer query parameters are numbers, sent as decimals; dates as Unix ms; arrays repeated', async () => {
    const f = scripted(json([]), json([]), json([]));
    const api = createClient('http://reader.test:8080', { fetch: f.fetch });
    await api.v1.vaults.$get({ query: { limit: 2, owner: ADDRESS } });
    await api.v1.vault[':address'].events.$get({
      param: { address: ADDRESS },
      query: { type: ['deposit', 'withdrawal'], since: new Date(1_000), until: '2025-01-01', limit: 500 },
    });
    await api.v1.vault[':address'].equity.$get({
      param: { address: ADDRESS },
      query: { points: 300, from: 5 },
    });
    expect(f.urls).toEqual([
      `http://reader.test:8080/v1/vaults?limit=2&owner=${ADDRESS}`,
      `http://reader.test:8080/v1/vault/${ADDRESS}/events?type=deposit&type=withdrawal&since=1000&until=2025-01-01&limit=500`,
      `http://reader.test:8080/v1/vault/${ADDRESS}/equity?points=300&from=5`,
    ]);
    expectTypeOf<Parameters<typeof api.v1.vaults.$get>[0]>().toEqualTypeOf<
      { query?: { owner?: string; chainId?: number; limit?: number; cursor?: string } } | undefined
    >();
    // @ts-expect-error: limit is a number, not a string
    void api.v1.vaults.$get({ query: { limit: '2' } }).catch(() => undefined);
  });

  it('keeps a base path, leaves out undefined values, encodes path parameters, sends headers', async () => {
    const f = scripted(json({}), json([]), json({ status: 'ok' }));
    const api = createClient('https://example.test/api/', { fetch: f.fetch, headers: { 'x-app': 'a' } });
    await api.v1.vault[':address'].snapshot.$get(
      { param: { address: 'a/b' } },
      { headers: { 'If-None-Match': '"e"' } },
    );
    await api.v1.vaults.$get({ query: { owner: undefined, cursor: 'abc' } });
    await api.health.$get();
    expect(f.urls).toEqual([
      'https://example.test/api/v1/vault/a%2Fb/snapshot',
      'https://example.test/api/v1/vaults?cursor=abc',
      'https://example.test/api/health',
    ]);
    expect(f.headers[0]!.get('if-none-match')).toBe('"e"');
    expect(f.headers[0]!.get('x-app')).toBe('a');
    expect(f.headers[0]!.get('accept')).toBe('application/json');
  });

  it('searchParams: numbers, strings, dates, arrays; undefined left out', () => {
    expect(searchParams({ a: 1, b: 'x', c: new Date(7), d: ['p', 'q'], e: undefined }).toString()).toBe(
      'a=1&b=x&c=7&d=p&d=q',
    );
  });
});

describe('answers', () => {
  it('ok() returns the 200 body, typed; anything else throws an ApiError with the code and message', async () => {
    const f = scripted(
      json([vault(1)]),
      error(400, 'invalid_request'),
      () => new Response(null, { status: 304 }),
    );
    const api = createClient('http://r.test', { fetch: f.fetch });
    const list = await ok(await api.v1.vaults.$get());
    expectTypeOf(list).toEqualTypeOf<VaultSummary[]>();
    expect(list).toEqual([vault(1)]);
    const bad = ok(await api.v1.vaults.$get({ query: { limit: 0 } }));
    await expect(bad).rejects.toMatchObject({
      name: 'ApiError',
      status: 400,
      code: 'invalid_request',
      message: '400 invalid_request: invalid_request here',
    });
    const notModified = ok(await api.v1.strategies.$get());
    await expect(notModified).rejects.toBeInstanceOf(ApiError);
  });

  it('ledger rows are a union discriminated by type: narrowing types data', () => {
    const row = {
      id: 'x',
      vault: ADDRESS,
      chainId: 1,
      txHash: `0x${'0'.repeat(64)}`,
      blockNumber: 1,
      blockHash: `0x${'0'.repeat(64)}`,
      txIndex: 0,
      logIndex: 0,
      ts: 1,
      type: 'deposit',
      data: { from: `0x${'1'.repeat(40)}`, token: `0x${'2'.repeat(40)}`, amount: '1000' },
      amounts: [
        { field: 'amount', token: `0x${'2'.repeat(40)}`, symbol: 'USDC', amount: '0.001', valueUsd: 0.001 },
      ],
    } satisfies LedgerRow as LedgerRow;
    const amount = (r: LedgerRow) => {
      if (r.type === 'deposit') {
        expectTypeOf(r.data).toEqualTypeOf<{ from: `0x${string}`; token: `0x${string}`; amount: string }>();
        return r.data.amount;
      }
      if (r.type === 'balance.reconciled') return r.data.bookedAs;
      // @ts-expect-error: a suspended row has no amount
      return r.type === 'suspended' ? r.data.amount : undefined;
    };
    expect(amount(row)).toBe('1000');
    expectTypeOf<LedgerRow['type']>().toEqualTypeOf<(typeof LEDGER_TYPES)[number]>();
    expect(new Set(LEDGER_TYPES).size).toBe(LEDGER_TYPES.length);
  });
});

describe('pages', () => {
  it('follows X-Next-Cursor to the last page, keeping the other arguments', async () => {
    const f = scripted(
      json([vault(1), vault(2)], 200, { 'x-next-cursor': 'c1' }),
      json([vault(3), vault(4)], 200, { 'x-next-cursor': 'c2' }),
      json([vault(5)]),
    );
    const api = createClient('http://r.test', { fetch: f.fetch });
    const seen: VaultSummary[][] = [];
    for await (const page of pages(api.v1.vaults, { query: { owner: ADDRESS, limit: 2 } })) seen.push(page);
    expect(seen.map((p) => p.map((v) => v.valueUsd))).toEqual([[1, 2], [3, 4], [5]]);
    expect(f.urls).toEqual([
      `http://r.test/v1/vaults?owner=${ADDRESS}&limit=2`,
      `http://r.test/v1/vaults?owner=${ADDRESS}&limit=2&cursor=c1`,
      `http://r.test/v1/vaults?owner=${ADDRESS}&limit=2&cursor=c2`,
    ]);
  });

  it('items flattens the pages; an error page throws; stopping early asks no more', async () => {
    const f = scripted(
      json([vault(1)], 200, { 'x-next-cursor': 'c1' }),
      error(400, 'invalid_request'),
      json([vault(1), vault(2)], 200, { 'x-next-cursor': 'c1' }),
    );
    const api = createClient('http://r.test', { fetch: f.fetch });
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const v of items(api.v1.vaults, {})) got.push(v.valueUsd);
      })(),
    ).rejects.toThrow(/400 invalid_request/);
    expect(got).toEqual([1]);
    for await (const v of items(api.v1.vaults, {})) {
      expectTypeOf(v).toEqualTypeOf<VaultSummary>();
      break;
    }
    expect(f.urls).toHaveLength(3);
  });

  it('pages of the ledger are typed rows', async () => {
    const f = scripted(json([]));
    const api = createClient('http://r.test', { fetch: f.fetch });
    for await (const page of pages(api.v1.vault[':address'].events, {
      param: { address: ADDRESS },
      query: { type: 'deposit,withdrawal', limit: 10 },
    }))
      expectTypeOf(page).toEqualTypeOf<LedgerRow[]>();
    expect(f.urls).toEqual([`http://r.test/v1/vault/${ADDRESS}/events?type=deposit%2Cwithdrawal&limit=10`]);
  });
});

describe('Retry-After', () => {
  const clock = () => {
    const waits: number[] = [];
    return { waits, sleep: async (ms: number) => void waits.push(ms) };
  };

  it('retryAfterMs reads delta-seconds and HTTP dates; nothing else', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(' 0 ')).toBe(0);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:10 GMT', Date.UTC(2015, 9, 21, 7, 28, 0))).toBe(10_000);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:10 GMT', Date.UTC(2016, 0, 1))).toBe(0);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs('-1')).toBeUndefined();
  });

  it('a 429 and a 503 are asked again after the Retry-After they carry', async () => {
    const c = clock();
    const f = scripted(
      error(429, 'rate_limited', { 'retry-after': '2' }),
      error(503, 'unavailable', { 'retry-after': '1' }),
      json([vault(1)]),
    );
    const api = createClient('http://r.test', { fetch: f.fetch, sleep: c.sleep });
    expect(await ok(await api.v1.vaults.$get())).toEqual([vault(1)]);
    expect(c.waits).toEqual([2000, 1000]);
    expect(f.urls).toHaveLength(3);
  });

  it('retries are bounded: the last answer is returned as it is', async () => {
    const c = clock();
    const f = scripted(
      ...Array.from({ length: RETRY_DEFAULTS.retries + 1 }, () =>
        error(429, 'rate_limited', { 'retry-after': '1' }),
      ),
    );
    const api = createClient('http://r.test', { fetch: f.fetch, sleep: c.sleep });
    const res = await api.v1.vaults.$get();
    expect(res.status).toBe(429);
    await expect(ok(res)).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    expect(c.waits).toEqual([1000, 1000, 1000]);

    const once = scripted(error(503, 'unavailable', { 'retry-after': '1' }), error(503, 'unavailable'));
    const one = createClient('http://r.test', { fetch: once.fetch, sleep: c.sleep, retry: { retries: 1 } });
    expect((await one.v1.strategies.$get()).status).toBe(503);
    expect(once.urls).toHaveLength(2);
  });

  it('a wait longer than maxDelayMs is not waited for; without Retry-After the backoff doubles', async () => {
    const c = clock();
    const f = scripted(error(429, 'rate_limited', { 'retry-after': '60' }));
    const api = createClient('http://r.test', {
      fetch: f.fetch,
      sleep: c.sleep,
      retry: { maxDelayMs: 5000 },
    });
    expect((await api.v1.vaults.$get()).status).toBe(429);
    expect(c.waits).toEqual([]);

    const g = scripted(error(503, 'unavailable'), error(503, 'unavailable'), json([]));
    const b = createClient('http://r.test', {
      fetch: g.fetch,
      sleep: c.sleep,
      retry: { fallbackDelayMs: 100 },
    });
    expect((await b.v1.vaults.$get()).status).toBe(200);
    expect(c.waits).toEqual([100, 200]);
  });

  it('other statuses are never retried, nor anything with retry: false', async () => {
    const c = clock();
    const f = scripted(error(500, 'internal'), error(404, 'not_found'), error(429, 'rate_limited'));
    const api = createClient('http://r.test', { fetch: f.fetch, sleep: c.sleep });
    expect((await api.v1.vaults.$get()).status).toBe(500);
    expect((await api.v1.tx[':hash'].$get({ param: { hash: '0x1' } })).status).toBe(404);
    const off = createClient('http://r.test', { fetch: f.fetch, sleep: c.sleep, retry: false });
    expect((await off.v1.vaults.$get()).status).toBe(429);
    expect(c.waits).toEqual([]);
  });

  it('an abort cuts the wait short (real timer)', async () => {
    const f = scripted(error(429, 'rate_limited', { 'retry-after': '10' }));
    const api = createClient('http://r.test', { fetch: f.fetch });
    const abort = new AbortController();
    const pending = api.v1.vaults.$get({}, { signal: abort.signal });
    setTimeout(() => abort.abort(new Error('stop')), 20);
    const started = Date.now();
    await expect(pending).rejects.toThrow('stop');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
