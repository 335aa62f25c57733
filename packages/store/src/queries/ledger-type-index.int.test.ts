import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import type { QueryConfig } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, hexToBytes, type Pool } from '../pool/index.js';
import { type LedgerFilter, ledgerPage, PER_TYPE_MAX } from './index.js';

/**
 * `?type=` on a busy vault: a page of a rare type is an index range of ledger_vault_type_ts
 * (migration 0017), not a walk through the vault's rows newest first. The plan is the one of the
 * statement ledgerPage really sends (captured), explained on a seeded table.
 */

const BUSY = `0x${'b'.repeat(40)}`;
const OTHER = `0x${'c'.repeat(40)}`;
const DEPOSITS = 200_000;
const RARE = 12; // `suspended` rows, the oldest ones (the worst case for a newest-first walk)

let db: TestDatabase;
let writer: Pool;

/** The statement ledgerPage sends for `f`: its text and values, captured instead of run. */
async function statementOf(f: LedgerFilter): Promise<QueryConfig> {
  let sent: QueryConfig | undefined;
  const capture = {
    query: async (config: QueryConfig) => {
      sent = config;
      return { rows: [] };
    },
  } as unknown as Pool;
  await ledgerPage(capture, f);
  return sent!;
}

interface Plan {
  text: string;
  /** Shared buffers read or hit: the pages the query touched. */
  buffers: number;
  ms: number;
}

async function explain(f: LedgerFilter, generic = false): Promise<Plan> {
  const q = await statementOf(f);
  const client = await writer.connect();
  try {
    if (generic) await client.query('set plan_cache_mode = force_generic_plan');
    // PREPARE + EXPLAIN EXECUTE: the plan a named statement (the reader's) gets, generic or custom.
    await client.query(`prepare explain_me as ${q.text}`);
    const literal = (v: unknown): string =>
      Array.isArray(v)
        ? `array[${v.map(literal).join(', ')}]::text[]`
        : typeof v === 'number'
          ? String(v)
          : client.escapeLiteral(String(v));
    const args = (q.values ?? []).map(literal).join(', ');
    const { rows } = await client.query<{
      'QUERY PLAN': [{ Plan: Record<string, unknown>; 'Execution Time': number }];
    }>(`explain (analyze, buffers, format json) execute explain_me(${args})`);
    const top = rows[0]!['QUERY PLAN'][0];
    const texts: string[] = [];
    const walk = (n: Record<string, unknown>, depth: number) => {
      texts.push(
        `${' '.repeat(depth * 2)}${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}`,
      );
      for (const c of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(c, depth + 1);
    };
    walk(top.Plan, 0);
    const buffers = Number(top.Plan['Shared Hit Blocks'] ?? 0) + Number(top.Plan['Shared Read Blocks'] ?? 0);
    return { text: texts.join('\n'), buffers, ms: top['Execution Time'] };
  } finally {
    await client.query('deallocate all').catch(() => {});
    await client.query('reset plan_cache_mode').catch(() => {});
    client.release();
  }
}

beforeAll(async () => {
  db = await createTestDatabase('ledger-type-index');
  writer = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'test', max: 2 });
  // A busy vault: 200,000 deposits, one per block, with RARE suspensions among the oldest
  // blocks; another vault beside it.
  await writer.query(
    `insert into ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload)
     select 1, decode(lpad(to_hex(b), 64, '0'), 'hex'), decode(lpad(to_hex(b), 64, '0'), 'hex'), 0,
            ${hexToBytes('$1')}, b, 0, 1000 * b, case when b <= $2 then 'suspended' else 'deposit' end, '{}'
     from generate_series(1, $3::int) b`,
    [BUSY, RARE, DEPOSITS + RARE],
  );
  await writer.query(
    `insert into ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload)
     select 1, decode(lpad(to_hex(b), 64, '0'), 'hex'), decode(lpad(to_hex(b), 64, '1'), 'hex'), 1,
            ${hexToBytes('$1')}, b, 0, 1000 * b, 'suspended', '{}'
     from generate_series(1, 1000) b`,
    [OTHER],
  );
  await writer.query('analyze ledger');
}, 120_000);
afterAll(async () => {
  await writer?.end();
  await db?.drop();
});

describe('ledger_vault_type_ts serves ?type= on a busy vault', () => {
  const rare: LedgerFilter = { chainId: 1, vault: BUSY, types: ['suspended'], limit: 50 };

  it('a page of a rare type is an index range of ledger_vault_type_ts (custom and generic plan)', async () => {
    for (const generic of [false, true]) {
      const plan = await explain(rare, generic);
      console.log(
        `?type=suspended, ${generic ? 'generic' : 'custom'} plan: ${plan.buffers} buffers, ${plan.ms.toFixed(2)} ms\n${plan.text}`,
      );
      expect(plan.text).toMatch(/Index Scan using ledger_vault_type_ts/);
      expect(plan.text).not.toMatch(/ledger_vault_ts\b/);
      expect(plan.text).not.toMatch(/Seq Scan/);
      expect(plan.buffers).toBeLessThan(100);
    }
    // The rows: the vault's suspensions, newest first, nothing of the other vault.
    const page = await ledgerPage(writer, rare);
    expect(page.rows.map((r) => (JSON.parse(r) as { blockNumber: number }).blockNumber)).toEqual(
      Array.from({ length: RARE }, (_, i) => RARE - i),
    );
  });

  it('with a window and a cursor, and several types, still per type; every asked type merged in order', async () => {
    const first = await ledgerPage(writer, {
      chainId: 1,
      vault: BUSY,
      types: ['suspended', 'deposit'],
      limit: 3,
      since: 5_000,
    });
    expect(first.rows.map((r) => (JSON.parse(r) as { blockNumber: number }).blockNumber)).toEqual([
      DEPOSITS + RARE,
      DEPOSITS + RARE - 1,
      DEPOSITS + RARE - 2,
    ]);
    const f: LedgerFilter = {
      chainId: 1,
      vault: BUSY,
      types: ['suspended', 'resumed'],
      limit: 4,
      since: 2_000,
      after: { ts: 10_000, blockNumber: 10, txIndex: 0, logIndex: 0, blockHash: `0x${'0'.repeat(62)}0a` },
    };
    const plan = await explain(f);
    expect(plan.text).toMatch(/Index Scan using ledger_vault_type_ts/);
    expect(plan.text).not.toMatch(/Seq Scan/);
    const page = await ledgerPage(writer, f);
    expect(page.rows.map((r) => (JSON.parse(r) as { blockNumber: number }).blockNumber)).toEqual([
      9, 8, 7, 6,
    ]);
  });

  it('without a type filter (the whole vocabulary) the page still reads ledger_vault_ts newest first', async () => {
    const all = Array.from({ length: PER_TYPE_MAX + 1 }, (_, i) => (i === 0 ? 'deposit' : `t${i}`));
    const plan = await explain({ chainId: 1, vault: BUSY, types: all, limit: 50 });
    expect(plan.text).toMatch(/Index Scan using ledger_vault_ts/);
    expect(plan.buffers).toBeLessThan(100);
  });

  it('before the index (0017 dropped): the same page walks the busy vault', async () => {
    const client = await writer.connect();
    try {
      await client.query('begin');
      await client.query('drop index ledger_vault_type_ts');
      const q = await statementOf(rare);
      const { rows } = await client.query<{
        'QUERY PLAN': [{ Plan: Record<string, unknown>; 'Execution Time': number }];
      }>({
        text: `explain (analyze, buffers, format json) ${q.text}`,
        values: q.values,
      });
      const top = rows[0]!['QUERY PLAN'][0];
      const buffers =
        Number(top.Plan['Shared Hit Blocks'] ?? 0) + Number(top.Plan['Shared Read Blocks'] ?? 0);
      console.log(`before 0017, ?type=suspended: ${buffers} buffers, ${top['Execution Time'].toFixed(2)} ms`);
      expect(buffers).toBeGreaterThan(1000);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });
});
