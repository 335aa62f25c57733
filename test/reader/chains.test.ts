import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  errorCode,
  insertEquity,
  insertLedger,
  insertSnapshots,
  makeSnapshot,
  randomAddress,
  randomHash,
  startReader,
  type TestReader,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Many chains (issue #45, DESIGN §8): the same vault address on two chains with different
 * histories is two vaults. Rows are seeded with SQL in migration 0028's layout (chain_id beside
 * every vault), read back through a real reader on real Postgres.
 */

const [OP, BASE] = [10, 8453];
const T0 = 1_735_689_600_000;

interface Row {
  id: string;
  vault: string;
  chainId: number;
  type: string;
  txHash: string;
  blockNumber: number;
}

describe('many chains: a vault is (chain, address)', () => {
  let db: TestDatabase;
  let w: Writer;
  let r: TestReader;
  /** A vault on both chains (the same deployer), with different owners, values and histories. */
  const SHARED = randomAddress();
  /** A vault on one chain only. */
  const ALONE = randomAddress();
  const TX = randomHash();
  const id = (chain: number, vault: string) => `eip155:${chain}:${vault}`;
  const onOp = makeSnapshot({ chainId: OP, vault: SHARED, valueMicros: 1_000_000_000, blockNumber: 500 });
  const onBase = makeSnapshot({
    chainId: BASE,
    vault: SHARED,
    valueMicros: 7_000_000_000,
    blockNumber: 9_000,
  });
  const alone = makeSnapshot({ chainId: BASE, vault: ALONE, blockNumber: 9_001 });

  beforeAll(async () => {
    db = await createTestDatabase('reader_chains');
    w = writer(db.writerUrl, db.schema);
    await insertSnapshots(w, [onOp, onBase, alone]);
    // Histories: Optimism one deposit, Base two; one transaction hash on both chains.
    await insertLedger(w, [
      { chainId: OP, vault: SHARED, type: 'deposit', blockNumber: 400, txHash: TX, ts: T0 },
      { chainId: BASE, vault: SHARED, type: 'deposit', blockNumber: 8_000, txHash: TX, ts: T0 + 1_000 },
      { chainId: BASE, vault: SHARED, type: 'withdrawal', blockNumber: 8_500, ts: T0 + 2_000 },
    ]);
    const point = (ts: number, value: string) => ({
      ts,
      valueUsd: value,
      capitalInUsd: '1000',
      capitalOutUsd: '0',
    });
    await insertEquity(w, SHARED, [point(T0, '1000')], 1, OP);
    await insertEquity(w, SHARED, [point(T0, '7000'), point(T0 + 60_000, '7100')], 1, BASE);
    // Indexer: Optimism's checkpoint with its block times; Base has no checkpoint row readable yet.
    await w.query(
      `insert into indexer_checkpoint (chain_id, block_number, block_hash) values ($1, 510, '0xcp')`,
      [OP],
    );
    await w.query(
      `insert into indexer_blocks (chain_id, block_number, block_hash, parent_hash, block_timestamp)
       values ($1, 510, '0xcp', '0xp', $2), ($1, 512, '0xh', '0xcp', $3)`,
      [OP, T0 / 1000 + 20, T0 / 1000 + 24],
    );
    r = await startReader(db, {
      freshness: { kafka: null, indexerSchema: db.schema, maxLagRecords: 0, maxLagSeconds: 0 },
    });
  }, 60_000);
  afterAll(async () => {
    await r?.stop();
    await w?.end();
    await db?.drop();
  });

  it('a vault id serves its own chain’s snapshot, equity and events', async () => {
    for (const [chain, snap, values, types] of [
      [OP, onOp, [1000], ['deposit']],
      [BASE, onBase, [7000, 7100], ['withdrawal', 'deposit']],
    ] as const) {
      const s = await r.get(`/v1/vault/${id(chain, SHARED)}/snapshot`);
      expect(s.status).toBe(200);
      expect(s.body).toEqual(snap);
      expect(s.body).toMatchObject({ id: id(chain, SHARED), chainId: chain, vault: SHARED });
      const e = await r.get(`/v1/vault/${id(chain, SHARED)}/equity`);
      expect(e.status).toBe(200);
      expect((e.body as { chainId: number; valueUsd: number }[]).map((p) => [p.chainId, p.valueUsd])).toEqual(
        values.map((v) => [chain, v]),
      );
      const ev = await r.get(`/v1/vault/${id(chain, SHARED)}/events`);
      expect(ev.status).toBe(200);
      const rows = ev.body as Row[];
      expect(rows.map((x) => x.type)).toEqual(types);
      expect(rows.every((x) => x.chainId === chain && x.vault === SHARED)).toBe(true);
    }
  });

  it('an id in any case of its hex, or percent-encoded, names the same vault', async () => {
    const upper = `eip155:${BASE}:0x${SHARED.slice(2).toUpperCase()}`;
    expect((await r.get(`/v1/vault/${upper}/snapshot`)).body).toEqual(onBase);
    const encoded = encodeURIComponent(id(BASE, SHARED));
    expect((await r.get(`/v1/vault/${encoded}/snapshot`)).body).toEqual(onBase);
    // The typed client encodes the parameter.
    const res = await r.client.v1.vault[':vault'].snapshot.$get({ param: { vault: id(OP, SHARED) } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(onOp);
  });

  it('a bare address on several chains answers 409 listing both ids, on every vault route', async () => {
    for (const path of ['snapshot', 'equity', 'events', 'stream']) {
      const res = await r.get(`/v1/vault/${SHARED}/${path}`);
      expect(res.status, path).toBe(409);
      const body = res.body as { error: { code: string; message: string; candidates: string[] } };
      expect(body.error.code).toBe('ambiguous_vault');
      expect(body.error.candidates).toEqual([id(OP, SHARED), id(BASE, SHARED)]);
      expect(Object.keys(body.error).sort()).toEqual(['candidates', 'code', 'message']);
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    // An upper-case bare address is the same address.
    const upper = await r.get(`/v1/vault/0x${SHARED.slice(2).toUpperCase()}/snapshot`);
    expect(upper.status).toBe(409);
  });

  it('a bare address on one chain is that vault (200); an unknown one or an unknown id is 404', async () => {
    const s = await r.get(`/v1/vault/${ALONE}/snapshot`);
    expect(s.status).toBe(200);
    expect(s.body).toEqual(alone);
    expect((await r.get(`/v1/vault/${ALONE}/equity`)).status).toBe(200);
    expect((await r.get(`/v1/vault/${ALONE}/events`)).status).toBe(200);
    for (const path of [`/v1/vault/${randomAddress()}/snapshot`, `/v1/vault/${id(OP, ALONE)}/snapshot`]) {
      const res = await r.get(path);
      expect(res.status, path).toBe(404);
      expect(errorCode(res)).toBe('not_found');
    }
    // Equity and events of an id on a chain the address is no vault on: 404, not another chain's rows.
    expect((await r.get(`/v1/vault/${id(OP, ALONE)}/equity`)).status).toBe(404);
    expect((await r.get(`/v1/vault/${id(OP, ALONE)}/events`)).status).toBe(404);
  });

  it('a malformed vault name is a 400', async () => {
    for (const bad of [
      `eip155:0:${SHARED}`,
      `eip155:01:${SHARED}`,
      `eip155:-1:${SHARED}`,
      `eip155:2147483648:${SHARED}`,
      `eip155:x:${SHARED}`,
      `eip155:10:${SHARED.slice(0, -1)}`,
      `eip155:10:${SHARED}0`,
      `eip155:10:0x${'g'.repeat(40)}`,
      `cosmos:10:${SHARED}`,
      `eip155::${SHARED}`,
      `10:${SHARED}`,
      SHARED.slice(2),
    ]) {
      const res = await r.get(`/v1/vault/${encodeURIComponent(bad)}/snapshot`);
      expect(res.status, bad).toBe(400);
      expect(errorCode(res)).toBe('invalid_request');
      expect((res.body as { error: { message: string } }).error.message).toMatch(/^path\.vault: /);
    }
  });

  it('GET /v1/vaults: an entry per (chain, address) with its id, by address then chain; ?chainId keeps one chain', async () => {
    const all = await r.get('/v1/vaults?limit=500');
    expect(all.status).toBe(200);
    const list = all.body as { id: string; chainId: number; vault: string; valueUsd: number }[];
    expect(list.map((v) => v.id)).toEqual(
      [
        [SHARED, OP],
        [SHARED, BASE],
        [ALONE, BASE],
      ]
        .sort(([a, ca], [b, cb]) => (a! < b! ? -1 : a! > b! ? 1 : Number(ca) - Number(cb)))
        .map(([v, c]) => id(Number(c), String(v))),
    );
    expect(list.find((v) => v.id === id(OP, SHARED))?.valueUsd).toBe(1000);
    expect(list.find((v) => v.id === id(BASE, SHARED))?.valueUsd).toBe(7000);
    const base = await r.get(`/v1/vaults?chainId=${BASE}`);
    expect((base.body as { id: string }[]).map((v) => v.id).sort()).toEqual(
      [id(BASE, SHARED), id(BASE, ALONE)].sort(),
    );
    expect((await r.get('/v1/vaults?chainId=1')).body).toEqual([]);
    for (const bad of ['0', 'x', '2147483648', '-1'])
      expect((await r.get(`/v1/vaults?chainId=${bad}`)).status, bad).toBe(400);
    // Pages of one: the cursor walks the same address's two chains without loss or repeat.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await r.get(`/v1/vaults?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...(page.body as { id: string }[]).map((v) => v.id));
      cursor = page.headers.get('x-next-cursor');
    } while (cursor);
    expect(seen).toEqual(list.map((v) => v.id));
  });

  it('GET /v1/tx/{hash}: the rows of every chain the hash is on, each with its chain, in one order', async () => {
    const res = await r.get(`/v1/tx/${TX}`);
    expect(res.status).toBe(200);
    const rows = res.body as Row[];
    expect(rows.map((x) => [x.chainId, x.vault, x.blockNumber])).toEqual([
      [BASE, SHARED, 8_000],
      [OP, SHARED, 400],
    ]);
    const first = await r.get(`/v1/tx/${TX}?limit=1`);
    const next = first.headers.get('x-next-cursor');
    expect(next).toBeTruthy();
    const second = await r.get(`/v1/tx/${TX}?limit=1&cursor=${next}`);
    expect([...(first.body as Row[]), ...(second.body as Row[])]).toEqual(rows);
  });

  it('GET /v1/chains: each chain followed, with its head, checkpoint, newest block folded and lags', async () => {
    const res = await r.get('/v1/chains');
    expect(res.status).toBe(200);
    const chains = res.body as {
      chainId: number;
      vaults: number;
      head: { blockNumber: number; blockTime: number | null } | null;
      checkpoint: { blockNumber: number; blockTime: number | null; updatedAt: number } | null;
      folded: { blockNumber: number } | null;
      lag: { blocks: number | null; seconds: number | null };
      foldedLag: { blocks: number | null; seconds: number | null };
    }[];
    expect(chains.map((c) => c.chainId)).toEqual([OP, BASE]);
    const [op, base] = chains;
    expect(op).toMatchObject({
      vaults: 1,
      head: { blockNumber: 512, blockTime: T0 + 24_000 },
      checkpoint: { blockNumber: 510, blockTime: T0 + 20_000 },
      folded: { blockNumber: 500 },
      lag: { blocks: 2 },
      foldedLag: { blocks: 10 },
    });
    // Seconds since the checkpoint block: far in the past here.
    expect(op!.lag.seconds).toBeGreaterThan(24 * 3600);
    expect(base).toMatchObject({
      vaults: 2,
      head: null,
      checkpoint: null,
      folded: { blockNumber: 9_001 },
      lag: { blocks: null, seconds: null },
      foldedLag: { blocks: null, seconds: null },
    });
    const typed = await r.client.v1.chains.$get();
    expect(await typed.json()).toEqual(chains);
  });
});
