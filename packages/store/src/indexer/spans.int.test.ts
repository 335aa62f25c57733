import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, type Pool } from '../pool/index.js';
import { createIndexerStore, type StoredVaultSeq } from './index.js';

const h = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const A = `0x${'a'.repeat(40)}`;
const B = `0x${'b'.repeat(40)}`;

/** compactSeqs on a real Postgres: rows below the block become spans; the window's stay rows. */
describe('indexer store: sequence rows compacted below the window', () => {
  let db: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase('store_seq_spans');
    pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'store-seq-spans', max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  const seq = (vault: string, n: number, first: number, last: number, mark?: boolean): StoredVaultSeq => ({
    vault,
    blockNumber: n,
    blockHash: h(n),
    firstSeq: first,
    lastSeq: last,
    ...(mark === undefined ? {} : { mark }),
  });
  const count = async (table: string) =>
    Number((await pool.query<{ n: string }>(`select count(*)::text as n from ${table}`)).rows[0]!.n);

  it('folds rows below the block into one span per run, in batches, and leaves the window as rows', async () => {
    const store = createIndexerStore(pool);
    const rows: StoredVaultSeq[] = [];
    // A: a record every block 1..100, a mark every 10th; B: two records every 5th block, and a
    // revert took number 21 after block 50.
    for (let n = 1; n <= 100; n++) rows.push(seq(A, n, n, n, n % 10 === 0));
    let next = 1;
    for (let n = 5; n <= 100; n += 5) {
      if (n === 55) next = 22;
      rows.push(seq(B, n, next, next + 1, false));
      next += 2;
    }
    await store.saveBlocks(1, [], [], rows);
    // Another chain's rows are not touched.
    await store.saveBlocks(2, [], [], [seq(A, 1, 1, 1, true)]);

    // Below block 91, at most 50 rows a transaction: A's lowest 50 first.
    let done = await store.compactSeqs(1, 91, { maxRows: 50 });
    expect(done).toEqual({ rows: 50, spans: 1, more: true });
    done = await store.compactSeqs(1, 91, { maxRows: 50 });
    expect(done).toEqual({ rows: 50, spans: 2, more: true });
    done = await store.compactSeqs(1, 91, { maxRows: 50 });
    expect(done).toEqual({ rows: 8, spans: 1, more: false });
    expect(await store.compactSeqs(1, 91)).toEqual({ rows: 0, spans: 0, more: false });

    const spansA = await store.vaultSeqSpans(1, A, 0, 1000);
    expect(spansA).toEqual([
      {
        vault: A,
        fromBlock: 1,
        toBlock: 90,
        toHash: h(90),
        firstSeq: 1,
        lastSeq: 90,
        blocks: 90,
        marks: [10, 20, 30, 40, 50, 60, 70, 80, 90],
      },
    ]);
    expect(await store.vaultSeqSpans(1, B.toUpperCase().replace('0X', '0x'), 0, 1000)).toEqual([
      { vault: B, fromBlock: 5, toBlock: 50, toHash: h(50), firstSeq: 1, lastSeq: 20, blocks: 10, marks: [] },
      {
        vault: B,
        fromBlock: 55,
        toBlock: 90,
        toHash: h(90),
        firstSeq: 22,
        lastSeq: 37,
        blocks: 8,
        marks: [],
      },
    ]);
    // Ranges: spans that overlap them.
    expect((await store.vaultSeqSpans(1, B, 51, 54)).length).toBe(0);
    expect((await store.vaultSeqSpans(1, B, 50, 55)).map((s) => s.fromBlock)).toEqual([5, 55]);
    // The window's rows are rows still (what a rewind deletes and reverts read).
    expect((await store.vaultSeqs(1, A, 0, 1000)).map((r) => r.blockNumber)).toEqual([
      91, 92, 93, 94, 95, 96, 97, 98, 99, 100,
    ]);
    expect((await store.seqsAbove(1, 90)).length).toBe(12);
    expect(await count('indexer_vault_seqs')).toBe(13);

    // The window slides: the next rows extend the last spans.
    done = await store.compactSeqs(1, 96);
    expect(done).toEqual({ rows: 6, spans: 2, more: false });
    expect(await store.vaultSeqSpans(1, A, 0, 1000)).toMatchObject([
      { fromBlock: 1, toBlock: 95, lastSeq: 95, blocks: 95 },
    ]);
    expect((await store.vaultSeqSpans(1, B, 0, 1000)).at(-1)).toMatchObject({
      toBlock: 95,
      lastSeq: 39,
      blocks: 9,
    });
    expect(await count('indexer_vault_seq_spans')).toBe(3);
    expect(await count('indexer_vault_seqs')).toBe(7);
  });

  it('keeps rows written before 0019 (kind unknown) of one record as possible marks', async () => {
    const store = createIndexerStore(pool);
    const V = `0x${'c'.repeat(40)}`;
    await store.saveBlocks(
      3,
      [],
      [],
      [seq(V, 1, 1, 2), seq(V, 2, 3, 3), seq(V, 4, 4, 4, false), seq(V, 6, 5, 5, true)],
    );
    await store.compactSeqs(3, 10);
    expect(await store.vaultSeqSpans(3, V, 0, 10)).toEqual([
      { vault: V, fromBlock: 1, toBlock: 6, toHash: h(6), firstSeq: 1, lastSeq: 5, blocks: 4, marks: [2, 6] },
    ]);
  });
});
