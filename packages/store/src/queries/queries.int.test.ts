import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, hexToBytes, type Pool } from '../pool/index.js';
import {
  chainStatuses,
  ledgerPage,
  readiness,
  screenMeta,
  snapshotOf,
  snapshotsMatching,
  snapshotsOf,
  strategyList,
  vaultPage,
  vaultsAt,
} from './index.js';

describe('read queries (read-only role)', () => {
  let db: TestDatabase;
  let writer: Pool;
  let reader: Pool;
  const vault = `0x${'a'.repeat(40)}`;

  beforeAll(async () => {
    db = await createTestDatabase('queries');
    writer = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'test', max: 2 });
    reader = createPgPool({ url: db.readerUrl, schema: db.schema, applicationName: 'test-reader', max: 2 });
    await writer.query(
      `insert into vault_snapshot (vault, chain_id, owner, strategy, status, snapshot, state, last_record_id, records_applied, created_at, updated_at)
       values ($1, 1, $2, 's', 'idle', '{"vault": "x", "n": 1.5}', '{}', 'r1', 3, 1, 2)`,
      [vault, `0x${'b'.repeat(40)}`],
    );
  });
  afterAll(async () => {
    await reader?.end();
    await writer?.end();
    await db?.drop();
  });

  it('snapshot: JSON text as stored and an ETag that moves with the applied record', async () => {
    const row = await snapshotOf(reader, { chainId: 1, vault });
    expect(JSON.parse(row!.json)).toEqual({ vault: 'x', n: 1.5 });
    expect(row).toMatchObject({ id: `eip155:1:${vault}`, chainId: 1, vault });
    expect(row!.etag).toMatch(/^[0-9a-f]{32}$/);
    await writer.query(`update vault_snapshot set records_applied = 4 where vault = $1`, [vault]);
    expect((await snapshotOf(reader, { chainId: 1, vault }))!.etag).not.toBe(row!.etag);
    expect(await snapshotOf(reader, { chainId: 1, vault: `0x${'c'.repeat(40)}` })).toBeNull();
    expect(await snapshotOf(reader, { chainId: 2, vault })).toBeNull();
    const many = await snapshotsOf(reader, [`eip155:1:${vault}`, `eip155:1:0x${'c'.repeat(40)}`]);
    expect([...many.keys()]).toEqual([`eip155:1:${vault}`]);
  });

  it('ledger page with no types is empty without a query; vault list pages; empty catalogue', async () => {
    expect(await ledgerPage(reader, { chainId: 1, vault, types: [], limit: 5 })).toEqual({
      rows: [],
      next: null,
    });
    expect(await vaultPage(reader, { limit: 1 })).toMatchObject({
      next: null,
      rows: [{ vault, valueUsd: null }],
    });
    expect(await strategyList(reader)).toEqual([]);
    expect(await screenMeta(reader)).toBeNull();
  });

  it('readiness: current after migrate; behind when a migration is missing', async () => {
    const ok = await readiness(reader, db.schema);
    expect(ok.current).toBe(true);
    expect(ok.applied).toBe(ok.expected);
    expect(await readiness(reader, 'never_migrated')).toMatchObject({ applied: 0, current: false });
  });

  describe('many chains: the same address is a vault on two chains', () => {
    const shared = `0x${'e'.repeat(40)}`;
    beforeAll(async () => {
      await writer.query(
        `insert into vault_snapshot (vault, chain_id, owner, strategy, status, snapshot, state, last_record_id, records_applied, created_at, updated_at)
         select $1, c, $2, 's', 'idle', json_build_object('chain', c, 'blockNumber', 100 * c), '{}', 'r' || c, 1, 1, 1000 * c
         from unnest(array[10, 8453]) c`,
        [shared, `0x${'f'.repeat(40)}`],
      );
      await writer.query(
        `insert into ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload)
         select c, decode(lpad(to_hex(c), 64, '0'), 'hex'), decode(lpad('1', 64, '0'), 'hex'), 0,
                ${hexToBytes('$1')}, 5, 0, 5000, 'deposit', json_build_object('chain', c)
         from unnest(array[10, 8453]) c`,
        [shared],
      );
    });

    it('by id: the one chain’s row; by address: every chain’s; vaultsAt lists them by chain', async () => {
      const on10 = await snapshotOf(reader, { chainId: 10, vault: shared });
      expect(JSON.parse(on10!.json)).toEqual({ chain: 10, blockNumber: 1000 });
      const on8453 = await snapshotOf(reader, { chainId: 8453, vault: shared });
      expect(JSON.parse(on8453!.json)).toEqual({ chain: 8453, blockNumber: 845300 });
      expect(on10!.etag).not.toBe(on8453!.etag);
      const both = await snapshotsMatching(reader, [`eip155:10:${shared}`], [shared, `0x${'c'.repeat(40)}`]);
      expect(both.map((r) => r.id).sort()).toEqual(
        [`eip155:10:${shared}`, `eip155:10:${shared}`, `eip155:8453:${shared}`].sort(),
      );
      expect(await vaultsAt(reader, shared.toUpperCase().replace('0X', '0x'))).toEqual([
        { chainId: 10, vault: shared },
        { chainId: 8453, vault: shared },
      ]);
      expect(await vaultsAt(reader, `0x${'c'.repeat(40)}`)).toEqual([]);
    });

    it('a vault’s ledger page is its chain’s rows only', async () => {
      for (const chainId of [10, 8453]) {
        const page = await ledgerPage(reader, { chainId, vault: shared, types: ['deposit'], limit: 10 });
        expect(page.rows.map((r) => JSON.parse(r) as { chainId: number; data: unknown })).toMatchObject([
          { chainId, data: { chain: chainId } },
        ]);
      }
    });

    it('vault pages: by address then chain, with ids; a chain filter; the cursor resumes within an address', async () => {
      const all = await vaultPage(reader, { owner: `0x${'f'.repeat(40)}`, limit: 1 });
      expect(all.rows.map((r) => r.id)).toEqual([`eip155:10:${shared}`]);
      expect(all.next).toEqual({ vault: shared, chainId: 10 });
      const rest = await vaultPage(reader, { owner: `0x${'f'.repeat(40)}`, limit: 5, after: all.next! });
      expect(rest.rows.map((r) => r.id)).toEqual([`eip155:8453:${shared}`]);
      // A cursor of the address alone (issued before chains): every chain of it is past.
      expect((await vaultPage(reader, { limit: 5, after: { vault: shared } })).rows).toEqual([]);
      const base = await vaultPage(reader, { chainId: 8453, limit: 5 });
      expect(base.rows).toMatchObject([{ id: `eip155:8453:${shared}`, chainId: 8453, vault: shared }]);
      expect((await vaultPage(reader, { chainId: 1, limit: 5 })).rows.map((r) => r.vault)).toEqual([vault]);
    });

    it('chains: one entry per chain with vaults (the indexer unread without its schema), with checkpoints when readable', async () => {
      const without = await chainStatuses(reader, db.schema, { now: 10_000 });
      expect(without.map((c) => [c.chainId, c.vaults, c.checkpoint, c.folded?.blockNumber ?? null])).toEqual([
        [1, 1, null, null],
        [10, 1, null, 1000],
        [8453, 1, null, 845300],
      ]);
      await writer.query(
        `insert into indexer_checkpoint (chain_id, block_number, block_hash) values (10, 1010, 'h1010'), (42161, 7, 'h7')`,
      );
      await writer.query(
        `insert into indexer_blocks (chain_id, block_number, block_hash, parent_hash, block_timestamp)
         values (10, 1010, 'h1010', 'h1009', 3), (10, 1012, 'h1012', 'h1011', 5)`,
      );
      const got = await chainStatuses(writer, db.schema, { indexerSchema: db.schema, now: 10_000 });
      expect(got.map((c) => c.chainId)).toEqual([1, 10, 8453, 42161]);
      const op = got.find((c) => c.chainId === 10)!;
      expect(op).toMatchObject({
        vaults: 1,
        head: { blockNumber: 1012, blockTime: 5000 },
        checkpoint: { blockNumber: 1010, blockTime: 3000 },
        folded: { blockNumber: 1000, blockTime: 10_000 },
        lag: { blocks: 2, seconds: 7 },
        foldedLag: { blocks: 10, seconds: 0 },
      });
      expect(got.find((c) => c.chainId === 42161)).toMatchObject({
        vaults: 0,
        head: { blockNumber: 7, blockTime: null },
        folded: null,
        lag: { blocks: 0, seconds: null },
        foldedLag: { blocks: null, seconds: null },
      });
    });
  });

  describe('ledger pages (time-first order, one index)', () => {
    const v = `0x${'d'.repeat(40)}`;
    const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
    beforeAll(async () => {
      // 600 rows over 200 blocks, 3 per block (a mark at tx -1 and two logs), block time
      // non-decreasing (two blocks share each second).
      await writer.query(
        `insert into ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload)
         select 1, decode(lpad(to_hex(b), 64, '0'), 'hex'), decode(lpad(to_hex(b * 10 + k), 64, '0'), 'hex'),
                case when k = 0 then -1 else k end, ${hexToBytes('$1')}, b, case when k = 0 then -1 else 0 end,
                1000 * (b / 2), case when k = 0 then 'mark' else 'deposit' end, '{}'
         from generate_series(1, 200) b, generate_series(0, 2) k`,
        [v],
      );
      await writer.query('analyze ledger');
    });

    const walk = async (f: { since?: number; until?: number; legacy?: boolean }) => {
      const seen: string[] = [];
      let after: Parameters<typeof ledgerPage>[1]['after'];
      for (;;) {
        const page = await ledgerPage(reader, {
          chainId: 1,
          vault: v,
          types: ['mark', 'deposit'],
          limit: 7,
          after,
          ...f,
        });
        for (const r of page.rows) {
          const row = JSON.parse(r) as { blockNumber: number; txIndex: number; logIndex: number };
          seen.push(`${row.blockNumber}:${row.txIndex}:${row.logIndex}`);
        }
        if (!page.next) return seen;
        expect(page.next.ts).toBeTypeOf('number');
        if (f.legacy) {
          const { ts: _ts, ...e1 } = page.next;
          after = e1;
        } else after = page.next;
      }
    };

    it('pages newest first by block, tx and log; an e1 cursor (no time) walks the same rows', async () => {
      const expected: string[] = [];
      for (let b = 200; b >= 1; b--) expected.push(`${b}:0:2`, `${b}:0:1`, `${b}:-1:-1`);
      expect(await walk({})).toEqual(expected);
      expect(await walk({ legacy: true })).toEqual(expected);
      // since inclusive, until exclusive, on block time: blocks 20..39 have ts 10,000..19,000.
      expect(await walk({ since: 10_000, until: 20_000 })).toEqual(
        expected.filter((k) => {
          const b = Number(k.split(':')[0]);
          return b >= 20 && b < 40;
        }),
      );
    });

    it('is served by ledger_vault_ts alone: window and cursor as an index range, no full sort', async () => {
      const client = await writer.connect();
      try {
        await client.query('set enable_seqscan = off');
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(
          `explain select * from ledger
           where vault = ${hexToBytes('$1')} and type = any($2::text[]) and ts >= $3 and ts < $4
             and (ts, block_number, tx_index, log_index, block_hash) < ($5, $6, $7, $8, ${hexToBytes('$9')})
           order by ts desc, block_number desc, tx_index desc, log_index desc, block_hash desc limit 8`,
          [v, ['deposit'], 0, 99_000, 50_000, 100, 0, 1, hash(100)],
        );
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan).toMatch(/Index Scan using ledger_vault_ts/);
        expect(plan).toMatch(/Index Cond: .*ROW\(ts, block_number, tx_index, log_index\) <=/s);
        // At most an incremental sort on block_hash within equal (ts, block, tx, log): never a
        // sort of the vault's whole window.
        expect(plan).not.toMatch(/(^|->)\s*Sort\s+\(cost/m);
        expect(plan).not.toMatch(/Sort Method: external/);
      } finally {
        client.release();
      }
      const { rows: indexes } = await writer.query<{ indexname: string }>(
        `select indexname from pg_indexes where schemaname = current_schema() and tablename = 'ledger' order by 1`,
      );
      // ledger_vault_type_ts (0017) serves type-filtered pages: ledger-type-index.test.ts;
      // ledger_commit_xid (0021) the rows of one projection commit, for live streams and webhooks.
      expect(indexes.map((r) => r.indexname)).toEqual([
        'ledger_commit_xid',
        'ledger_pkey',
        'ledger_vault_ts',
        'ledger_vault_type_ts',
      ]);
    });
  });
});
