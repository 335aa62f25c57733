import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  errorCode,
  insertCatalogue,
  insertSnapshots,
  makeSnapshot,
  randomAddress,
  startReader,
  strategies,
  type TestReader,
  universe,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('catalogue, universe and vault list', () => {
  let db: TestDatabase;
  let w: Writer;
  let r: TestReader;
  const owner = randomAddress();
  const ownerVaults = Array.from({ length: 23 }, () => makeSnapshot({ owner }));
  const others = Array.from({ length: 40 }, () => makeSnapshot());

  beforeAll(async () => {
    db = await createTestDatabase('reader-catalogue');
    w = writer(db.writerUrl, db.schema);
    r = await startReader(db);
  });
  afterAll(async () => {
    await r?.stop();
    await w?.end();
    await db?.drop();
  });

  it('before any screen: empty arrays, no screen headers', async () => {
    for (const p of ['/v1/strategies', '/v1/universe', '/v1/universe/pairs']) {
      const res = await r.get(p);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
      expect(res.headers.get('x-screen-version')).toBeNull();
    }
    expect((await r.get('/v1/vaults')).body).toEqual([]);
  });

  it('strategies: id, name, pairs {a,b,venues}, liveApr and sigma (null until history), display copy', async () => {
    await insertCatalogue(w);
    await insertSnapshots(w, [...ownerVaults, ...others]);
    const res = await r.get('/v1/strategies');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(strategies);
    const fresh = (res.body as typeof strategies).find((s) => s.id === 'new-meme')!;
    expect(fresh.liveApr).toBeNull();
    expect(fresh.sigma).toBeNull();
    expect(res.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
  });

  it('universe: assets with venues, liquidity and category, in screen order; screen headers', async () => {
    const res = await r.get('/v1/universe');
    expect(res.body).toEqual(universe.assets);
    expect(new Set((res.body as { category: string }[]).map((a) => a.category))).toEqual(
      new Set(['major', 'stable', 'stock token', 'meme']),
    );
    expect(res.headers.get('x-screen-version')).toBe(universe.screen.version);
    expect(res.headers.get('x-screened-at')).toBe(String(universe.screen.screenedAt));
  });

  it('universe pairs: venues, TVL and emissions', async () => {
    const res = await r.get('/v1/universe/pairs');
    expect(res.body).toEqual(universe.pairs);
    expect(res.headers.get('x-screen-version')).toBe(universe.screen.version);
  });

  it('catalogue responses carry an ETag and answer 304; no query parameters accepted', async () => {
    for (const p of ['/v1/strategies', '/v1/universe', '/v1/universe/pairs']) {
      const etag = (await r.get(p)).headers.get('etag')!;
      expect(etag).toMatch(/^W\/"/);
      expect((await r.get(p, { 'If-None-Match': etag })).status).toBe(304);
      const res = await r.get(`${p}?limit=10`);
      expect(res.status).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
    }
  });

  it('vaults: ascending address, paginated by cursor, summary fields', async () => {
    const all = [...ownerVaults, ...others].map((s) => s.vault).sort();
    const seen: string[] = [];
    let path: string | null = '/v1/vaults?limit=10';
    while (path) {
      const res = await r.get(path);
      expect(res.status).toBe(200);
      const rows = res.body as { vault: string; owner: string; status: string; valueUsd: number }[];
      expect(rows.length).toBeLessThanOrEqual(10);
      seen.push(...rows.map((x) => x.vault));
      const link = res.headers.get('link');
      path = link ? link.slice(1, link.indexOf('>')) : null;
      if (link) expect(res.headers.get('x-next-cursor')).toBeTruthy();
    }
    expect(seen).toEqual(all);
    const first = (await r.get('/v1/vaults?limit=1')).body as Record<string, unknown>[];
    const snap = [...ownerVaults, ...others].find((s) => s.vault === all[0])!;
    expect(first[0]).toEqual({
      id: `eip155:31337:${snap.vault}`,
      chainId: 31337,
      vault: snap.vault,
      owner: snap.owner,
      strategy: snap.strategy,
      status: snap.status,
      valueUsd: snap.valueUsd,
      netUsd: snap.netUsd,
      createdAt: snap.updatedAt - 86_400_000,
      updatedAt: snap.updatedAt,
    });
  });

  it('vaults?owner= filters by owner (any case in), with pagination', async () => {
    const upper = `0x${owner.slice(2).toUpperCase()}`;
    const seen: string[] = [];
    let res = await r.get(`/v1/vaults?owner=${upper}&limit=5`);
    for (;;) {
      const rows = res.body as { vault: string; owner: string }[];
      expect(rows.every((x) => x.owner === owner)).toBe(true);
      seen.push(...rows.map((x) => x.vault));
      const c = res.headers.get('x-next-cursor');
      if (!c) break;
      res = await r.get(`/v1/vaults?owner=${owner}&limit=5&cursor=${c}`);
    }
    expect(seen).toEqual(ownerVaults.map((s) => s.vault).sort());
    expect((await r.get(`/v1/vaults?owner=${randomAddress()}`)).body).toEqual([]);
  });

  it('vaults: validation', async () => {
    const eventsCursor = Buffer.from(`e1:1:0:0:0x${'0'.repeat(64)}`).toString('base64url');
    for (const q of [
      '?owner=0x12',
      '?owner=',
      '?limit=0',
      '?limit=501',
      `?cursor=${eventsCursor}`,
      '?cursor=zz',
      '?sort=desc',
    ]) {
      const res = await r.get(`/v1/vaults${q}`);
      expect(res.status, q).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
    }
  });
});
