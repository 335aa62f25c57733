import { activityTypes, type RecordType } from '@vault-yield/domain';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  blockHashOf,
  errorCode,
  insertLedger,
  insertSnapshots,
  type LedgerSpec,
  makeSnapshot,
  type Res,
  randomAddress,
  randomHash,
  samplePayload,
  startReader,
  type TestReader,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface Row {
  id: string;
  vault: string;
  chainId: number;
  type: string;
  txHash: string;
  blockNumber: number;
  blockHash: string;
  txIndex: number;
  logIndex: number;
  ts: number;
  data: unknown;
}

const T0 = 1_735_689_600_000;
const newestFirst = (a: LedgerSpec, b: LedgerSpec) =>
  b.blockNumber - a.blockNumber ||
  (b.txIndex ?? 0) - (a.txIndex ?? 0) ||
  (b.logIndex ?? 0) - (a.logIndex ?? 0);

/** N activity rows: 3 per block (tx 0 logs 0,1; tx 1 log 2), types cycling, ts = 12 s per block. */
function ledgerFor(vault: string, n: number, firstBlock = 1000): LedgerSpec[] {
  return Array.from({ length: n }, (_, i) => {
    const blockNumber = firstBlock + Math.floor(i / 3);
    const k = i % 3;
    return {
      vault,
      type: activityTypes[i % activityTypes.length] as RecordType,
      blockNumber,
      txIndex: k === 2 ? 1 : 0,
      logIndex: k,
      ts: T0 + (blockNumber - 1000) * 12_000,
      txHash: randomHash(),
    };
  });
}

const shuffle = <T>(xs: T[]) =>
  xs
    .map((x) => [Math.random(), x] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, x]) => x);

describe('GET /v1/vault/:address/events', () => {
  let db: TestDatabase;
  let w: Writer;
  let r: TestReader;
  const A = makeSnapshot();
  const B = makeSnapshot();
  const empty = makeSnapshot({ status: 'idle' });
  const rowsA = ledgerFor(A.vault, 120);
  const sharedTx = randomHash();
  const expectedA = [...rowsA].sort(newestFirst);

  beforeAll(async () => {
    db = await createTestDatabase('reader-events');
    w = writer(db.writerUrl, db.schema);
    await insertSnapshots(w, [A, B, empty]);
    // Plumbing records in the same table: never served.
    const plumbing: LedgerSpec[] = [
      { vault: A.vault, type: 'mark', blockNumber: 1005, ts: T0 + 5 * 12_000 },
      { vault: A.vault, type: 'mark', blockNumber: 1100, ts: T0 + 100 * 12_000 },
      { vault: A.vault, type: 'revert', blockNumber: 1101, ts: T0 + 101 * 12_000 },
    ];
    // One transaction touching A and B (a factory call, say): the tx lookup returns both.
    const shared: LedgerSpec[] = [
      {
        vault: A.vault,
        type: 'deposit',
        blockNumber: 900,
        txIndex: 4,
        logIndex: 10,
        txHash: sharedTx,
        ts: T0 - 1,
      },
      {
        vault: B.vault,
        type: 'vault.created',
        blockNumber: 900,
        txIndex: 4,
        logIndex: 9,
        txHash: sharedTx,
        ts: T0 - 1,
      },
    ];
    expectedA.push(shared[0]!);
    await insertLedger(w, shuffle([...rowsA, ...plumbing, ...shared]));
    r = await startReader(db);
  });
  afterAll(async () => {
    await r?.stop();
    await w?.end();
    await db?.drop();
  });

  const get = (q: string, vault = A.vault) => r.get(`/v1/vault/${vault}/events${q}`);
  const rowsOf = (res: Res) => res.body as Row[];
  const key = (x: { blockNumber: number; txIndex?: number; logIndex?: number }) =>
    `${x.blockNumber}/${x.txIndex ?? 0}/${x.logIndex ?? 0}`;

  /** Follows X-Next-Cursor to the end; returns every row. */
  async function walk(q: string, vault = A.vault): Promise<Row[]> {
    const out: Row[] = [];
    let res = await get(q, vault);
    for (;;) {
      expect(res.status).toBe(200);
      out.push(...rowsOf(res));
      const next = res.headers.get('x-next-cursor');
      if (!next) return out;
      const link = res.headers.get('link')!;
      expect(link).toMatch(/^<\/v1\/vault\/0x[0-9a-f]{40}\/events\?.*cursor=[A-Za-z0-9_-]+>; rel="next"$/);
      res = await r.get(link.slice(1, link.indexOf('>')));
    }
  }

  it('rows are newest first by (blockNumber, txIndex, logIndex); default limit 50 with a next cursor', async () => {
    const res = await get('');
    expect(res.status).toBe(200);
    const rows = rowsOf(res);
    expect(rows).toHaveLength(50);
    expect(rows.map(key)).toEqual(expectedA.slice(0, 50).map(key));
    expect(res.headers.get('x-next-cursor')).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('row shape: id, vault, chainId, type, txHash, block, indexes, ts (Unix ms) and data = the payload', async () => {
    const rows = await walk('?limit=500');
    expect(rows).toHaveLength(expectedA.length);
    rows.forEach((row, i) => {
      const spec = expectedA[i]!;
      expect(row).toEqual({
        id: `31337:${blockHashOf(spec.blockNumber)}:${spec.txHash}:${spec.logIndex}:${A.vault}`,
        vault: A.vault,
        chainId: 31337,
        type: spec.type,
        txHash: spec.txHash,
        blockNumber: spec.blockNumber,
        blockHash: blockHashOf(spec.blockNumber),
        txIndex: spec.txIndex,
        logIndex: spec.logIndex,
        ts: spec.ts,
        data: samplePayload(spec.type),
        // the fixture writes rows as before migration 0018: no amounts (the projector's rows have them)
        amounts: null,
      });
      expect(Number.isInteger(row.ts)).toBe(true);
    });
    expect(new Set(rows.map((x) => x.id)).size).toBe(rows.length);
  });

  it('serves only activity types: mark and revert are never returned nor accepted as a filter', async () => {
    const rows = await walk('?limit=500');
    expect(rows.some((x) => x.type === 'mark' || x.type === 'revert')).toBe(false);
    expect(new Set(rows.map((x) => x.type))).toEqual(new Set(activityTypes));
    for (const t of ['mark', 'revert', 'deposit,mark']) {
      const res = await get(`?type=${t}`);
      expect(res.status).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
    }
  });

  it('type: one, comma list, repeated, mixed and duplicated all select the same set', async () => {
    const want = (types: string[]) => expectedA.filter((x) => types.includes(x.type)).map(key);
    const one = await walk('?type=deposit&limit=500');
    expect(one.map(key)).toEqual(want(['deposit']));
    expect(one.length).toBeGreaterThan(0);
    const expected = want(['deposit', 'withdrawal', 'fee.charged']);
    for (const q of [
      '?type=deposit,withdrawal,fee.charged',
      '?type=deposit&type=withdrawal&type=fee.charged',
      '?type=deposit,withdrawal&type=fee.charged',
      '?type=fee.charged,deposit,withdrawal,deposit',
    ]) {
      expect((await walk(`${q}&limit=500`)).map(key)).toEqual(expected);
    }
  });

  it('type: unknown, empty or blank entries → 400', async () => {
    for (const q of [
      '?type=Deposit',
      '?type=',
      '?type=deposit,',
      '?type=,deposit',
      '?type=deposits',
      '?type=deposit&type=',
    ]) {
      const res = await get(q);
      expect(res.status, q).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
    }
  });

  it('since is inclusive, until exclusive, on the block time ts; Unix ms and ISO-8601 are equivalent', async () => {
    const since = T0 + 10 * 12_000; // block 1010 exactly
    const until = T0 + 20 * 12_000; // block 1020 exactly: excluded
    const expected = expectedA.filter((x) => x.ts! >= since && x.ts! < until).map(key);
    expect(expected.length).toBe(30);
    const ms = await walk(`?since=${since}&until=${until}&limit=500`);
    expect(ms.map(key)).toEqual(expected);
    expect(ms.some((x) => x.ts === since)).toBe(true);
    expect(ms.some((x) => x.ts === until)).toBe(false);
    const iso = await walk(
      `?since=${new Date(since).toISOString()}&until=${encodeURIComponent(new Date(until).toISOString().replace('Z', '+00:00'))}&limit=500`,
    );
    expect(iso.map(key)).toEqual(expected);
    const offset = await walk(`?since=${encodeURIComponent('2025-01-01T02:02:00+02:00')}&limit=500`);
    expect(offset.map(key)).toEqual(expectedA.filter((x) => x.ts! >= since).map(key));
    const onlySince = await walk(`?since=${since}&limit=500`);
    expect(onlySince.map(key)).toEqual(expectedA.filter((x) => x.ts! >= since).map(key));
    const onlyUntil = await walk(`?until=${until}&limit=500`);
    expect(onlyUntil.map(key)).toEqual(expectedA.filter((x) => x.ts! < until).map(key));
    const date = await walk('?until=2025-01-01&limit=500'); // midnight UTC = T0: only the shared-tx row
    expect(date.map(key)).toEqual(expectedA.filter((x) => x.ts! < T0).map(key));
  });

  it('since/until: bad formats and since ≥ until → 400', async () => {
    for (const q of [
      '?since=abc',
      '?since=-1',
      '?since=1.5',
      '?since=1e12',
      '?since=2025-01-01T00:00:00', // no offset: ambiguous
      '?since=2024-02-30',
      '?since=2025-13-01',
      '?since=2025-01-01T24:00:00Z',
      '?since=99999999999999999',
      `?since=${T0}&until=${T0}`,
      `?since=${T0 + 1}&until=${T0}`,
      '?since=2025-01-02&until=2025-01-01',
      `?since=${T0}&since=${T0}`,
    ]) {
      const res = await get(q);
      expect(res.status, q).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
    }
  });

  it('limit: 1..500 accepted; 0, 501, negative, fractional, non-numeric, repeated → 400 (not clamped)', async () => {
    expect(rowsOf(await get('?limit=1'))).toHaveLength(1);
    expect(rowsOf(await get('?limit=500'))).toHaveLength(expectedA.length);
    expect((await get('?limit=500')).headers.get('x-next-cursor')).toBeNull();
    for (const q of [
      '?limit=0',
      '?limit=501',
      '?limit=-1',
      '?limit=2.5',
      '?limit=ten',
      '?limit=010',
      '?limit=5&limit=6',
      '?limit=',
    ]) {
      const res = await get(q);
      expect(res.status, q).toBe(400);
      expect((res.body as { error: { message: string } }).error.message).toMatch(/^query\.limit/);
    }
  });

  it('cursor pagination walks every row exactly once, in order, for any page size', async () => {
    for (const limit of [1, 7, 50, 121]) {
      const rows = await walk(`?limit=${limit}`);
      expect(rows.map(key)).toEqual(expectedA.map(key));
    }
  });

  it('filters combine (AND) and survive pagination: property over random filters', async () => {
    const types = fc.subarray([...activityTypes], { minLength: 1, maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(
        fc.option(types, { nil: undefined }),
        fc.option(fc.integer({ min: -2, max: 45 }), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 45 }), { nil: undefined }),
        fc.integer({ min: 1, max: 40 }),
        async (ts, sinceBlocks, spanBlocks, limit) => {
          const since = sinceBlocks === undefined ? undefined : T0 + sinceBlocks * 12_000;
          const until =
            spanBlocks === undefined ? undefined : (since ?? T0) + spanBlocks * 12_000 - (spanBlocks % 2);
          const params = new URLSearchParams();
          if (ts) params.set('type', ts.join(','));
          if (since !== undefined) params.set('since', String(since));
          if (until !== undefined) params.set('until', String(until));
          params.set('limit', String(limit));
          const rows = await walk(`?${params}`);
          const expected = expectedA.filter(
            (x) =>
              (!ts || (ts as string[]).includes(x.type)) &&
              (since === undefined || x.ts! >= since) &&
              (until === undefined || x.ts! < until),
          );
          expect(rows.map(key)).toEqual(expected.map(key));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('pagination is stable while rows are inserted concurrently (no repeats, no skips)', async () => {
    const C = makeSnapshot();
    await insertSnapshots(w, [C]);
    const initial = ledgerFor(C.vault, 90, 5000);
    await insertLedger(w, initial);
    const expected = [...initial].sort(newestFirst).map(key);

    // The first page is read before new activity starts, so it holds exactly the ten newest
    // original rows (a writer started first could fill whole pages with new rows before it).
    const first = await get('?limit=10', C.vault);
    const seen = rowsOf(first).map(key);
    expect(seen).toEqual(expected.slice(0, 10));
    let block = 6000;
    let stop = false;
    const writerLoop = (async () => {
      while (!stop) {
        // New activity arrives (newer blocks) while a client pages through older history.
        await insertLedger(w, ledgerFor(C.vault, 3, block));
        block += 1;
        await new Promise((res) => setTimeout(res, 2));
      }
    })();
    try {
      let cursor = first.headers.get('x-next-cursor');
      while (cursor) {
        const page = await get(`?limit=10&cursor=${cursor}`, C.vault);
        seen.push(...rowsOf(page).map(key));
        cursor = page.headers.get('x-next-cursor');
      }
      // Every original row exactly once and in order; rows inserted after the first page never
      // shift later pages nor show in them (all newer than the cursor).
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(expected);
    } finally {
      stop = true;
      await writerLoop;
    }
    expect(block).toBeGreaterThan(6000);
  });

  it('cursor: malformed, tampered or of another endpoint → 400', async () => {
    const good = (await get('?limit=5')).headers.get('x-next-cursor')!;
    const vaultsCursor = Buffer.from(`v1:${A.vault}`).toString('base64url');
    const tampered = Buffer.from('e1:1:2:3:0xnothex').toString('base64url');
    const huge = Buffer.from(`e1:99999999999999999:0:0:0x${'0'.repeat(64)}`).toString('base64url');
    for (const c of [
      'abc',
      '!!!',
      vaultsCursor,
      tampered,
      huge,
      `${good}=`,
      'x'.repeat(600),
      good.slice(0, -3),
    ]) {
      const res = await get(`?cursor=${encodeURIComponent(c)}`);
      expect(res.status, c).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
    }
    expect((await get(`?cursor=${good}`)).status).toBe(200);
  });

  it('unknown vault → 404 (with or without filters); a vault without activity → []', async () => {
    for (const q of ['', '?type=deposit', '?limit=3']) {
      const res = await get(q, randomAddress());
      expect(res.status).toBe(404);
      expect(errorCode(res)).toBe('not_found');
    }
    const none = await get('', empty.vault);
    expect(none.status).toBe(200);
    expect(none.body).toEqual([]);
    expect(none.headers.get('x-next-cursor')).toBeNull();
  });

  it('unknown query parameters → 400 naming the parameter', async () => {
    for (const q of ['?limt=5', '?offset=10', '?page=2', '?Type=deposit']) {
      const res = await get(q);
      expect(res.status).toBe(400);
      expect((res.body as { error: { message: string } }).error.message).toMatch(/unknown query parameter/);
    }
  });

  it('large pages are compressed when the client accepts gzip', async () => {
    const res = await fetch(`${r.url}/v1/vault/${A.vault}/events?limit=100`, {
      headers: { 'Accept-Encoding': 'gzip' },
    });
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(((await res.json()) as Row[]).length).toBe(100);
  });

  describe('GET /v1/tx/:hash', () => {
    it('returns the rows of one transaction across vaults, newest first', async () => {
      const res = await r.get(`/v1/tx/${sharedTx}`);
      expect(res.status).toBe(200);
      const rows = rowsOf(res);
      expect(rows.map((x) => [x.vault, x.type, x.logIndex])).toEqual([
        [A.vault, 'deposit', 10],
        [B.vault, 'vault.created', 9],
      ]);
      expect(rows.every((x) => x.txHash === sharedTx)).toBe(true);
    });

    it('accepts any case; unknown → 404; malformed → 400; synthesised records are not served', async () => {
      expect((await r.get(`/v1/tx/0x${sharedTx.slice(2).toUpperCase()}`)).status).toBe(200);
      const one = expectedA[3]!;
      const single = await r.get(`/v1/tx/${one.txHash}`);
      expect(rowsOf(single).map(key)).toEqual([key(one)]);
      const missing = await r.get(`/v1/tx/${randomHash()}`);
      expect(missing.status).toBe(404);
      expect(errorCode(missing)).toBe('not_found');
      const zero = await r.get(`/v1/tx/0x${'0'.repeat(64)}`); // marks and reverts carry the zero hash
      expect(zero.status).toBe(404);
      for (const bad of ['0x1234', sharedTx.slice(0, -1), `${sharedTx}0`, 'hello']) {
        const res = await r.get(`/v1/tx/${bad}`);
        expect(res.status).toBe(400);
        expect(errorCode(res)).toBe('invalid_request');
      }
      // Parameters other than limit and cursor are refused; limit is bounded, not clamped.
      expect((await r.get(`/v1/tx/${sharedTx}?since=1`)).status).toBe(400);
      for (const bad of ['0', '501', 'x'])
        expect((await r.get(`/v1/tx/${sharedTx}?limit=${bad}`)).status).toBe(400);
      expect(
        (await r.get(`/v1/tx/${sharedTx}?cursor=${encodeURIComponent('bm90LWEtY3Vyc29y')}`)).status,
      ).toBe(400);
    });

    it('is capped (limit, default 100, at most 500) and walks by cursor like events', async () => {
      // One big transaction: 230 rows across 3 vaults, one block.
      const bigTx = randomHash();
      const vaults = [randomAddress(), randomAddress(), randomAddress()];
      const specs = Array.from({ length: 230 }, (_, i) => ({
        vault: vaults[i % 3]!,
        type: 'deposit' as const,
        blockNumber: 900,
        txIndex: 3,
        logIndex: Math.floor(i / 3),
        txHash: bigTx,
        blockHash: blockHashOf(900),
        ts: 1_800_000_000_000,
      }));
      await insertLedger(w, specs);
      const txKey = (x: Row) => `${x.vault}/${x.logIndex}`;
      const first = await r.get(`/v1/tx/${bigTx}`);
      expect(first.status).toBe(200);
      expect(rowsOf(first).length).toBe(100); // the default cap
      const cursor = first.headers.get('x-next-cursor');
      expect(cursor).toBeTruthy();
      expect(first.headers.get('link')).toBe(`</v1/tx/${bigTx}?cursor=${cursor}>; rel="next"`);
      expect(rowsOf(await r.get(`/v1/tx/${bigTx}?limit=500`)).length).toBe(230);
      // The walk: every row once, in the unpaged order (newest first, then vault ascending).
      const all = rowsOf(await r.get(`/v1/tx/${bigTx}?limit=500`)).map(txKey);
      const walked: string[] = [];
      let next: string | null = null;
      let pages = 0;
      do {
        const res: Awaited<ReturnType<typeof r.get>> = await r.get(
          `/v1/tx/${bigTx}?limit=7${next ? `&cursor=${next}` : ''}`,
        );
        expect(res.status).toBe(200);
        walked.push(...rowsOf(res).map(txKey));
        next = res.headers.get('x-next-cursor');
        if (next) expect(res.headers.get('link')).toContain(`limit=7&cursor=${next}`);
        pages += 1;
      } while (next && pages < 100);
      expect(pages).toBe(Math.ceil(230 / 7));
      expect(walked).toEqual(all);
      expect(new Set(walked).size).toBe(230);
      // An events cursor is no tx cursor.
      const ev = await r.get(`/v1/vault/${A.vault}/events?limit=1`);
      const evCursor = ev.headers.get('x-next-cursor')!;
      expect((await r.get(`/v1/tx/${bigTx}?cursor=${evCursor}`)).status).toBe(400);
    });
  });
});
