import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  type EquitySpec,
  errorCode,
  insertEquity,
  insertSnapshots,
  makeSnapshot,
  randomAddress,
  startReader,
  type TestReader,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface Point {
  chainId: number;
  ts: number;
  blockNumber: number;
  valueUsd: number;
  capitalInUsd: number;
  capitalOutUsd: number;
  holdValueUsd: number | null;
}

const T0 = 1_735_689_600_000;
const HOUR = 3_600_000;

/**
 * 2,000 hourly points with deposits and a withdrawal: value moves with flows and a small drift,
 * so the net (value + out − in) is smooth while value jumps at each flow.
 */
function series(n: number): EquitySpec[] {
  let capIn = 0;
  let capOut = 0;
  let gain = 0;
  return Array.from({ length: n }, (_, i) => {
    if (i % 500 === 0) capIn += 10_000; // deposit
    if (i === 1234) capOut += 5_000; // withdrawal
    gain += Math.sin(i / 50) * 3;
    const value = capIn - capOut + gain;
    return {
      ts: T0 + i * HOUR,
      valueUsd: value.toFixed(6),
      capitalInUsd: capIn.toFixed(6),
      capitalOutUsd: capOut.toFixed(6),
    };
  });
}

describe('GET /v1/vault/:address/equity', () => {
  let db: TestDatabase;
  let w: Writer;
  let r: TestReader;
  const V = makeSnapshot();
  const empty = makeSnapshot({ status: 'idle' });
  const single = makeSnapshot();
  const pts = series(2000);
  // insertEquity stores block_number = ts / 1000.
  const asView = (p: EquitySpec): Point => ({
    chainId: 31337,
    ts: p.ts,
    blockNumber: p.ts / 1000,
    valueUsd: Number(p.valueUsd),
    capitalInUsd: Number(p.capitalInUsd),
    capitalOutUsd: Number(p.capitalOutUsd),
    // fixture points carry no holding value (as points of a projection folded before fold version 5)
    holdValueUsd: null,
  });

  beforeAll(async () => {
    db = await createTestDatabase('reader-equity');
    w = writer(db.writerUrl, db.schema);
    await insertSnapshots(w, [V, empty, single]);
    await insertEquity(w, V.vault, pts);
    await insertEquity(w, single.vault, [{ ts: T0, valueUsd: '1.5', capitalInUsd: '1', capitalOutUsd: '0' }]);
    r = await startReader(db);
  });
  afterAll(async () => {
    await r?.stop();
    await w?.end();
    await db?.drop();
  });

  const get = async (q: string, vault = V.vault) => {
    const res = await r.get(`/v1/vault/${vault}/equity${q}`);
    return { res, points: res.body as Point[] };
  };

  it('default: at most 200 points, oldest first, the latest point included', async () => {
    const { res, points } = await get('');
    expect(res.status).toBe(200);
    expect(points.length).toBeLessThanOrEqual(200);
    expect(points.length).toBeGreaterThan(150);
    expect(points.at(-1)).toEqual(asView(pts.at(-1)!));
    for (let i = 1; i < points.length; i++) expect(points[i]!.ts).toBeGreaterThan(points[i - 1]!.ts);
  });

  it('every point is a real stored state carrying its cumulative flows (net of flows is computable)', async () => {
    const byTs = new Map(pts.map((p) => [p.ts, asView(p)]));
    const { points } = await get('?points=37');
    for (const p of points) expect(p).toEqual(byTs.get(p.ts));
    // A chart's gain between two points = Δ(value + out − in): deposits never appear as gains.
    const net = (p: Point) => p.valueUsd + p.capitalOutUsd - p.capitalInUsd;
    const first = points[0]!;
    const last = points.at(-1)!;
    expect(last.capitalInUsd - first.capitalInUsd).toBeGreaterThan(0); // deposits happened in between…
    expect(Math.abs(net(last) - net(first))).toBeLessThan(last.capitalInUsd - first.capitalInUsd); // …not counted as gain
  });

  it('downsampling keeps the first point, then the last of each of points − 1 equal time buckets', async () => {
    const n = 10;
    const { points } = await get(`?points=${n}`);
    const lo = pts[0]!.ts;
    const hi = pts.at(-1)!.ts;
    const bucket = (ts: number) => Math.floor(((ts - lo) * (n - 1)) / (hi - lo + 1));
    const expected = new Map<number, EquitySpec>();
    for (const p of pts) expected.set(bucket(p.ts), p); // later points overwrite: last per bucket
    expect(points).toEqual([pts[0]!, ...expected.values()].map(asView));
  });

  it('each served point carries its blockNumber, and the OpenAPI document lists it', async () => {
    const { points } = await get('?points=5');
    expect(points.length).toBe(5);
    for (const p of points) expect(p.blockNumber).toBe(p.ts / 1000);
    const doc = (await r.get('/openapi.json')).body as {
      components: {
        schemas: Record<string, { properties: Record<string, { type?: string }>; required: string[] }>;
      };
    };
    const schema = doc.components.schemas.EquityPoint!;
    expect(schema.properties.blockNumber).toMatchObject({ type: 'integer' });
    expect(schema.required).toContain('blockNumber');
  });

  it('points bound holds for every resolution and window (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 0, max: 2100 }),
        fc.integer({ min: 1, max: 2100 }),
        async (n, startH, spanH) => {
          const from = T0 + startH * HOUR;
          const to = from + spanH * HOUR;
          const { res, points } = await get(`?points=${n}&from=${from}&to=${to}`);
          expect(res.status).toBe(200);
          const inWindow = pts.filter((p) => p.ts >= from && p.ts < to);
          expect(points.length).toBeLessThanOrEqual(Math.min(n, inWindow.length));
          if (inWindow.length > 0) {
            expect(points.at(-1)).toEqual(asView(inWindow.at(-1)!)); // latest of the window
            expect(points.length).toBeGreaterThan(0);
          } else expect(points).toEqual([]);
          if (n >= 2 && inWindow.length >= 2) expect(points[0]).toEqual(asView(inWindow[0]!)); // first too
          expect(points.every((p) => p.ts >= from && p.ts < to)).toBe(true);
          if (n >= inWindow.length) expect(points).toEqual(inWindow.map(asView)); // nothing dropped
        },
      ),
      { numRuns: 60 },
    );
  });

  it('from is inclusive, to exclusive; ISO-8601 accepted', async () => {
    const from = T0 + 10 * HOUR;
    const to = T0 + 20 * HOUR;
    const { points } = await get(`?from=${from}&to=${to}&points=1000`);
    expect(points.map((p) => p.ts)).toEqual(Array.from({ length: 10 }, (_, i) => from + i * HOUR));
    const iso = await get(
      `?from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}&points=1000`,
    );
    expect(iso.points).toEqual(points);
  });

  it('points=1 returns just the latest point; a single stored point; no points → []', async () => {
    expect((await get('?points=1')).points).toEqual([asView(pts.at(-1)!)]);
    expect((await get('', single.vault)).points).toEqual([
      {
        chainId: 31337,
        ts: T0,
        blockNumber: T0 / 1000,
        valueUsd: 1.5,
        capitalInUsd: 1,
        capitalOutUsd: 0,
        holdValueUsd: null,
      },
    ]);
    expect((await get('', empty.vault)).points).toEqual([]);
  });

  it('validation: points 1..1000, from < to, known parameters only; unknown vault → 404', async () => {
    for (const q of [
      '?points=0',
      '?points=1001',
      '?points=-5',
      '?points=x',
      `?from=${T0}&to=${T0}`,
      '?from=yesterday',
      '?resolution=5',
      '?since=1',
    ]) {
      const { res } = await get(q);
      expect(res.status, q).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
    }
    const { res } = await get('', randomAddress());
    expect(res.status).toBe(404);
    expect(errorCode(res)).toBe('not_found');
  });
});
