import { activityTypes, refOf } from '@vault-yield/domain';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, hexToBytes, type Pool } from '../pool/index.js';
import { type StreamCommit, type StreamPageBounds, streamCommits, streamRows } from './index.js';

/**
 * The live streams' pages (issue #42 item 4): bounded by rows and by the bytes of the rows' JSON,
 * a commit beyond either read in slices by the cursor's position; nothing lost or read twice.
 * Real Postgres, commits written as the projector writes them (ledger rows and their
 * stream_commits row in one transaction).
 */

const KIB = 1024;
// Two vaults at the same address on two chains (vault ids, as commits name them since 0028).
const ADDRESS = `0x${'a1'.repeat(20)}`;
const [V1, V2] = [`eip155:31337:${ADDRESS}`, `eip155:10:${ADDRESS}`];
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const bytes = (rows: readonly string[]) => rows.reduce((n, r) => n + Buffer.byteLength(r), 0);

describe('stream pages bounded by rows and bytes (real Postgres)', () => {
  let db: TestDatabase;
  let writer: Pool;
  let reader: Pool;
  let block = 0;

  /** One projection commit: its ledger rows (`kib` of payload each, by vault) and its stream_commits row. */
  const commit = async (rows: { vault: string; kib: number }[], retracted: string[] = []) => {
    const client = await writer.connect();
    try {
      await client.query('begin');
      for (const r of rows) {
        block += 1;
        await client.query(
          `insert into ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload)
           values ($6::int, ${hexToBytes('$1')}, ${hexToBytes('$2')}, 0, ${hexToBytes('$3')}, $4::int8, 0, $4::int8 * 1000, 'suspended',
                   jsonb_build_object('reason', repeat('é', $5::int * 512)))`,
          [hash(block), hash(1_000_000 + block), refOf(r.vault).vault, block, r.kib, refOf(r.vault).chainId],
        );
      }
      await client.query('insert into stream_commits (vaults, retracted) values ($1::text[], $2::text[])', [
        [...new Set(rows.map((r) => r.vault))].sort(),
        retracted.length > 0 ? retracted : null,
      ]);
      await client.query('commit');
    } finally {
      client.release();
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase('stream_pages');
    writer = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'test', max: 2 });
    reader = createPgPool({ url: db.readerUrl, schema: db.schema, applicationName: 'test-reader', max: 2 });
    await commit([
      { vault: V1, kib: 1 },
      { vault: V2, kib: 1 },
      { vault: V1, kib: 2 },
    ]); // small
    await commit(Array.from({ length: 6 }, (_, i) => ({ vault: i % 2 ? V1 : V2, kib: 40 }))); // 240 KiB
    await commit([{ vault: V2, kib: 3 }]);
    await commit([], [`31337:${hash(1)}:${hash(1_000_001)}:0:${ADDRESS}`]); // a revert's retraction alone: no rows
    await commit(Array.from({ length: 5 }, () => ({ vault: V1, kib: 30 }))); // 150 KiB
    await commit([{ vault: V2, kib: 300 }]); // one row larger than any page
    for (let i = 0; i < 30; i++) await commit([{ vault: i % 2 ? V1 : V2, kib: 8 }]);
  });
  afterAll(async () => {
    await reader?.end();
    await writer?.end();
    await db?.drop();
  });

  /**
   * Every commit from the start as a stream reads them: page after page, a commit whose rows a
   * page left out in slices from its cursor's position. Checks each read's bounds on the way.
   */
  const walk = async (bounds: StreamPageBounds, pageSize = 100) => {
    const out: { seq: string; vault: string; json: string }[] = [];
    const seqs: string[] = [];
    let after = '0';
    let pages = 0;
    for (;;) {
      const page = await streamCommits(reader, after, pageSize, activityTypes, bounds);
      if (page.length === 0) return { out, seqs, pages };
      pages += 1;
      expect(page.length).toBeLessThanOrEqual(pageSize);
      const held = page.flatMap((c) => c.rows.map((r) => r.json));
      if (page.length > 1) {
        // Whole commits within both bounds; a larger one only comes first, and alone.
        expect(held.length).toBeLessThanOrEqual(bounds.rows);
        expect(bytes(held)).toBeLessThanOrEqual(bounds.bytes);
        expect(page.every((c) => c.counts === undefined)).toBe(true);
      }
      for (const c of page) {
        seqs.push(c.seq);
        if (!c.counts) {
          for (const r of c.rows) out.push({ seq: c.seq, ...r });
          continue;
        }
        expect(c.rows).toEqual([]);
        for (const vault of c.vaults) {
          const n = c.counts.get(vault) ?? 0;
          for (let k = 0; k < n; ) {
            const slice = await streamRows(reader, c.seq, vault, k, bounds, activityTypes);
            expect(slice.length).toBeGreaterThan(0);
            expect(slice.length).toBeLessThanOrEqual(bounds.rows);
            if (slice.length > 1) expect(bytes(slice)).toBeLessThanOrEqual(bounds.bytes);
            for (const json of slice) out.push({ seq: c.seq, vault, json });
            k += slice.length;
          }
        }
      }
      after = page.at(-1)!.seq;
    }
  };

  const whole = { rows: Number.MAX_SAFE_INTEGER, bytes: Number.MAX_SAFE_INTEGER };

  it('a page holds whole commits within the bytes; a larger commit comes alone, its rows in slices; nothing lost or read twice', async () => {
    const all = await walk(whole);
    expect(all.seqs).toHaveLength(36);
    expect(all.out).toHaveLength(3 + 6 + 1 + 5 + 1 + 30);
    expect(all.pages).toBe(1);
    for (const bound of [100 * KIB, 64 * KIB, 20 * KIB, 1]) {
      const paged = await walk({ rows: 1_000, bytes: bound });
      expect(paged.seqs).toEqual(all.seqs);
      expect(paged.out).toEqual(all.out);
      expect(paged.pages).toBeGreaterThan(1);
    }
    // The 150 KiB commit under a 100 KiB bound: alone, counted, and the slices hold 3 then 2 rows.
    const big = all.seqs[4]!;
    const [alone] = await streamCommits(reader, all.seqs[3]!, 100, activityTypes, {
      rows: 1_000,
      bytes: 100 * KIB,
    });
    expect(alone).toMatchObject({ seq: big, rows: [] });
    expect([...(alone as StreamCommit).counts!]).toEqual([[V1, 5]]);
    const first = await streamRows(reader, big, V1, 0, { rows: 1_000, bytes: 100 * KIB }, activityTypes);
    expect(first).toHaveLength(3);
    // The 300 KiB row: a slice of one, whatever the bound.
    const huge = await streamRows(reader, all.seqs[5]!, V2, 0, { rows: 1_000, bytes: 1 }, activityTypes);
    expect(huge).toHaveLength(1);
    expect(Buffer.byteLength(huge[0]!)).toBeGreaterThan(300 * KIB);
  });

  it('rows and bytes bound a page together; a commit without rows first does not carry a larger one in unread', async () => {
    const all = await walk(whole);
    for (const bounds of [
      { rows: 3, bytes: Number.MAX_SAFE_INTEGER },
      { rows: 2, bytes: 50 * KIB },
      { rows: 1, bytes: 1 },
    ]) {
      const paged = await walk(bounds);
      expect(paged.seqs).toEqual(all.seqs);
      expect(paged.out).toEqual(all.out);
    }
    // After the small commit: the retraction-only commit comes alone, the 150 KiB one is the next page's.
    const [c3, c4] = [all.seqs[2]!, all.seqs[3]!];
    const page = await streamCommits(reader, c3, 100, activityTypes, {
      rows: 3,
      bytes: Number.MAX_SAFE_INTEGER,
    });
    expect(page.map((c) => c.seq)).toEqual([c4]);
    expect(page[0]!.retracted).toHaveLength(1);
  });

  it('a slice from any position of a split commit starts at that row (a resumed cursor)', async () => {
    const all = await walk(whole);
    const seq = all.seqs[1]!;
    for (const vault of [V1, V2]) {
      const rows = all.out.filter((r) => r.seq === seq && r.vault === vault).map((r) => r.json);
      expect(rows).toHaveLength(3);
      // Each vault's rows are its chain's (the same address on both).
      for (const r of rows)
        expect(JSON.parse(r)).toMatchObject({ chainId: refOf(vault).chainId, vault: ADDRESS });
      for (let k = 0; k <= rows.length; k++) {
        const got: string[] = [];
        for (let at = k; ; ) {
          const slice = await streamRows(reader, seq, vault, at, { rows: 2, bytes: 50 * KIB }, activityTypes);
          if (slice.length === 0) break;
          got.push(...slice);
          at += slice.length;
        }
        expect(got).toEqual(rows.slice(k));
      }
    }
  });
});
