import { ApiError, nextCursor, ok } from '@vault-yield/client';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  insertLedger,
  insertSnapshots,
  makeSnapshot,
  randomAddress,
  startReader,
  type TestReader,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** @vault-yield/client against a running reader: the calls the dashboard makes. */
describe('typed client (@vault-yield/client)', () => {
  let db: TestDatabase;
  let w: Writer;
  let r: TestReader;
  const owner = randomAddress();
  const mine = Array.from({ length: 5 }, () => makeSnapshot({ owner }));
  const suspended = makeSnapshot({ owner, status: 'suspended', suspensionReason: 'oracle deviation' });

  beforeAll(async () => {
    db = await createTestDatabase('reader-typed-client');
    w = writer(db.writerUrl, db.schema);
    r = await startReader(db);
    await insertSnapshots(w, [...mine, suspended, makeSnapshot(), makeSnapshot()]);
    await insertLedger(w, [
      { vault: suspended.vault, type: 'deposit', blockNumber: 10, ts: 10_000 },
      { vault: suspended.vault, type: 'withdrawal', blockNumber: 11, ts: 11_000 },
      { vault: suspended.vault, type: 'suspended', blockNumber: 12, ts: 12_000 },
    ]);
  });
  afterAll(async () => {
    await r?.stop();
    await w?.end();
    await db?.drop();
  });

  it('lists an owner’s vaults page by page with the cursor', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await r.client.v1.vaults.$get({
        query: { owner: owner.toUpperCase().replace('0X', '0x'), limit: 2, ...(cursor ? { cursor } : {}) },
      });
      const page = await ok(res);
      for (const v of page) expect(v.owner).toBe(owner);
      seen.push(...page.map((v) => v.vault));
      cursor = nextCursor(res);
    } while (cursor);
    expect(seen.sort()).toEqual([...mine, suspended].map((s) => s.vault).sort());
  });

  it('reads a snapshot (typed), then gets a 304 with its ETag', async () => {
    const res = await r.client.v1.vault[':address'].snapshot.$get({ param: { address: suspended.vault } });
    const snap = await ok(res);
    expect(snap.status).toBe('suspended');
    expect(snap.suspension?.reason).toBe('oracle deviation');
    expect(snap.netUsd).toBeCloseTo(snap.strategyDeltaUsd + snap.marketDeltaUsd, 6);
    const again = await r.client.v1.vault[':address'].snapshot.$get(
      { param: { address: suspended.vault } },
      { headers: { 'If-None-Match': res.headers.get('etag')! } },
    );
    expect(again.status).toBe(304);
  });

  it('filters the ledger by type (repeated and comma-separated)', async () => {
    const events = r.client.v1.vault[':address'].events;
    const both = await ok(
      await events.$get({ param: { address: suspended.vault }, query: { type: ['deposit', 'withdrawal'] } }),
    );
    expect(both.map((e) => e.type)).toEqual(['withdrawal', 'deposit']);
    const comma = await ok(
      await events.$get({ param: { address: suspended.vault }, query: { type: 'suspended,deposit' } }),
    );
    expect(comma.map((e) => e.type)).toEqual(['suspended', 'deposit']);
  });

  it('turns the one error shape into an ApiError naming the parameter', async () => {
    const res = await r.client.v1.vaults.$get({ query: { limit: 0 } });
    await expect(ok(res)).rejects.toThrow(ApiError);
    const bad = await r.client.v1.vaults.$get({ query: { limit: 0 } });
    await expect(ok(bad)).rejects.toThrow(
      /400 invalid_request: query\.limit: expected an integer from 1 to 500/,
    );
    const missing = await r.client.v1.tx[':hash'].$get({ param: { hash: `0x${'0'.repeat(64)}` } });
    await expect(ok(missing)).rejects.toThrow(/404 not_found/);
  });
});
