import { snapshotView } from '@vault-yield/domain';
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

describe('GET /v1/vault/:address/snapshot', () => {
  let db: TestDatabase;
  let w: Writer;
  let r: TestReader;
  const snaps = {
    earning: makeSnapshot({ status: 'earning' }),
    attention: makeSnapshot({
      status: 'attention',
      capitalOutMicros: 2_500_000_000,
      valueMicros: 7_900_000_001,
    }),
    suspended: makeSnapshot({ status: 'suspended', suspensionReason: 'price feed stale' }),
    idle: makeSnapshot({ status: 'idle' }),
    loss: makeSnapshot({ status: 'earning', valueMicros: 9_000_000_000, marketMicros: -1_500_000_000 }),
  };

  beforeAll(async () => {
    db = await createTestDatabase('reader-snapshot');
    w = writer(db.writerUrl, db.schema);
    await insertSnapshots(w, Object.values(snaps));
    r = await startReader(db);
  });
  afterAll(async () => {
    await r?.stop();
    await w?.end();
    await db?.drop();
  });

  it('serves the stored snapshot: every field of seed §2.1–2.3, as written', async () => {
    for (const s of Object.values(snaps)) {
      const res = await r.get(`/v1/vault/${s.vault}/snapshot`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toEqual(s);
      expect(snapshotView.parse(res.body)).toEqual(s);
    }
  });

  it('netUsd = valueUsd + capitalOutUsd − capitalInUsd, and strategy + market deltas = netUsd', async () => {
    for (const s of Object.values(snaps)) {
      const b = (await r.get(`/v1/vault/${s.vault}/snapshot`)).body as typeof s;
      expect(Math.abs(b.valueUsd + b.capitalOutUsd - b.capitalInUsd - b.netUsd)).toBeLessThan(1e-6);
      expect(Math.abs(b.strategyDeltaUsd + b.marketDeltaUsd - b.netUsd)).toBeLessThan(1e-6);
    }
  });

  it('suspension is null unless suspended; when set it carries reason, since and exitsAvailable: true', async () => {
    for (const s of Object.values(snaps)) {
      const b = (await r.get(`/v1/vault/${s.vault}/snapshot`)).body as typeof s;
      if (b.status === 'suspended') {
        expect(b.suspension).toEqual({
          reason: 'price feed stale',
          exitsAvailable: true,
          since: expect.any(Number),
        });
      } else expect(b.suspension).toBeNull();
    }
  });

  it('positions: ranges in price space (lower < upper), inRange consistent with current and status', async () => {
    for (const s of Object.values(snaps)) {
      const b = (await r.get(`/v1/vault/${s.vault}/snapshot`)).body as typeof s;
      for (const p of b.positions) {
        expect(p.range.lower).toBeLessThan(p.range.upper);
        expect(p.range.lower).toBeGreaterThan(1); // human prices, not ticks near 0 or ±887272 raw values
        expect(p.inRange).toBe(p.range.current >= p.range.lower && p.range.current < p.range.upper);
        expect(Number.isInteger(p.pool.feeTier)).toBe(true);
      }
      if (b.status === 'earning') expect(b.positions.every((p) => p.inRange)).toBe(true);
      if (b.status === 'attention') expect(b.positions.some((p) => !p.inRange)).toBe(true);
      if (b.status === 'idle') expect(b.capitalInUsd - b.capitalOutUsd).toBe(0);
    }
  });

  it('updatedAt is an integer of Unix milliseconds', async () => {
    const b = (await r.get(`/v1/vault/${snaps.earning.vault}/snapshot`)).body as { updatedAt: number };
    expect(Number.isInteger(b.updatedAt)).toBe(true);
    expect(b.updatedAt).toBe(1_735_689_600_000);
  });

  it('accepts the address in any case and serves it lowercase', async () => {
    const upper = `0x${snaps.earning.vault.slice(2).toUpperCase()}`;
    const res = await r.get(`/v1/vault/${upper}/snapshot`);
    expect(res.status).toBe(200);
    expect((res.body as { vault: string }).vault).toBe(snaps.earning.vault);
  });

  it('unknown vault → 404 not_found; malformed address → 400 invalid_request', async () => {
    const missing = await r.get(`/v1/vault/${randomAddress()}/snapshot`);
    expect(missing.status).toBe(404);
    expect(errorCode(missing)).toBe('not_found');
    for (const bad of [
      '0x12',
      'abc',
      `0x${'g'.repeat(40)}`,
      `${snaps.earning.vault}00`,
      snaps.earning.vault.slice(2),
    ]) {
      const res = await r.get(`/v1/vault/${bad}/snapshot`);
      expect(res.status).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
      expect((res.body as { error: { message: string } }).error.message).toMatch(/^path\.vault: /);
    }
  });

  it('query parameters are not accepted (unknown → 400)', async () => {
    const res = await r.get(`/v1/vault/${snaps.earning.vault}/snapshot?fields=all`);
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('invalid_request');
  });

  it('ETag from the last applied record: 304 on If-None-Match, changes when a record is applied', async () => {
    const path = `/v1/vault/${snaps.idle.vault}/snapshot`;
    const first = await r.get(path);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(first.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
    const again = await r.get(path);
    expect(again.headers.get('etag')).toBe(etag);

    const notModified = await r.get(path, { 'If-None-Match': etag });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag);
    expect((await r.get(path, { 'If-None-Match': `"x", W/${etag}` })).status).toBe(304);
    expect((await r.get(path, { 'If-None-Match': '*' })).status).toBe(304);
    expect((await r.get(path, { 'If-None-Match': '"other"' })).status).toBe(200);

    // The projector applies a record: new last_record_id / records_applied → new ETag, fresh body.
    const next = { ...snaps.idle, updatedAt: snaps.idle.updatedAt + 1000 };
    await insertSnapshots(w, [next], { recordsApplied: 8 });
    const changed = await r.get(path, { 'If-None-Match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect((changed.body as { updatedAt: number }).updatedAt).toBe(next.updatedAt);
  });

  it('HEAD answers like GET without a body', async () => {
    const res = await r.request('HEAD', `/v1/vault/${snaps.earning.vault}/snapshot`);
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers.get('etag')).toMatch(/^"/);
  });

  it('CORS: public read, any origin by default, exposes the paging and cache headers', async () => {
    const res = await r.get(`/v1/vault/${snaps.earning.vault}/snapshot`, { Origin: 'https://dash.example' });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toMatch(/ETag/);
    expect(res.headers.get('access-control-expose-headers')).toMatch(/X-Next-Cursor/);
    const pre = await r.request('OPTIONS', `/v1/vault/${snaps.earning.vault}/snapshot`, {
      Origin: 'https://dash.example',
      'Access-Control-Request-Method': 'GET',
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-methods')).toContain('GET');
    // Errors carry CORS headers too, so a dashboard can read them.
    const err = await r.get('/v1/vault/0x1/snapshot', { Origin: 'https://dash.example' });
    expect(err.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('a snapshot under 1 KiB is sent uncompressed with an exact Content-Length', async () => {
    const raw = await fetch(`${r.url}/v1/vault/${snaps.idle.vault}/snapshot`, {
      headers: { 'Accept-Encoding': 'gzip' },
    });
    const text = await raw.text();
    expect(Buffer.byteLength(text)).toBeLessThan(1024);
    expect(raw.headers.get('content-encoding')).toBeNull();
    expect(Number(raw.headers.get('content-length'))).toBe(Buffer.byteLength(text));
  });

  it('serves many concurrent requests for different vaults (batched reads) correctly', async () => {
    const many = Array.from({ length: 60 }, (_, i) => makeSnapshot({ valueMicros: 10_000_000_000 + i }));
    await insertSnapshots(w, many);
    const missing = Array.from({ length: 10 }, randomAddress);
    const targets = [...many.map((s) => s.vault), ...missing, ...many.slice(0, 10).map((s) => s.vault)];
    const results = await Promise.all(targets.map((v) => r.get(`/v1/vault/${v}/snapshot`)));
    results.forEach((res, i) => {
      const v = targets[i]!;
      const expected = many.find((s) => s.vault === v);
      if (expected) expect(res.body).toEqual(expected);
      else expect(res.status).toBe(404);
    });
  });
});
