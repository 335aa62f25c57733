import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/harness/index.js';
import { createPgPool, type Pool } from '../pool/index.js';
import { createProjectionStore } from '../projection/index.js';
import { migrate, migrations } from './index.js';

/** Upgrades of a database that holds data: the schema is built to an older version, filled, migrated. */

let db: TestDatabase;
let pool: Pool;
const SCHEMA = 'upgrade_from_0010';

beforeAll(async () => {
  db = await createTestDatabase('upgrade');
  pool = createPgPool({ url: db.writerUrl, schema: SCHEMA, applicationName: 'upgrade-test', max: 2 });
  await pool.query(`create schema ${SCHEMA}`);
  await pool.query(
    'create table schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())',
  );
  for (const m of migrations().filter((m) => m.version <= 10)) {
    await pool.query(m.sql);
    await pool.query('insert into schema_migrations (version, name) values ($1, $2)', [m.version, m.name]);
  }
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

const V1 = `0x${'a'.repeat(40)}`;
const V2 = `0x${'b'.repeat(40)}`;
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

describe('0011 record bundles', () => {
  it('moves every ledger record into bundles, in fold order, and re-folds read them back', async () => {
    const record = (vault: string, block: number, log: number) => ({
      chainId: 1,
      blockHash: hash(block),
      txHash: hash(block * 100 + log),
      logIndex: log,
      vault,
      blockNumber: block,
      type: 'deposit',
      payload: { n: block * 10 + log },
    });
    // Written out of fold order, one record with line breaks between its tokens (a producer's
    // pretty-printed JSON, kept as written by a json column), and a derived row with no record.
    const rows = [record(V1, 12, 0), record(V1, 10, 1), record(V1, 10, 0), record(V2, 11, 0)];
    for (const [i, r] of rows.entries()) {
      await pool.query(
        `insert into ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload, record)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          r.chainId,
          r.blockHash,
          r.txHash,
          r.logIndex,
          r.vault,
          r.blockNumber,
          r.logIndex,
          r.blockNumber * 1000,
          r.type,
          JSON.stringify(r.payload),
          i === 1 ? JSON.stringify(r, null, 2) : JSON.stringify(r),
        ],
      );
    }
    await pool.query(
      `insert into ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload, record)
       values (1, $1, $2, 2147483646, $3, 12, 2147483646, 12000, 'balance.reconciled', '{}', '{"type":"balance.reconciled"}')`,
      [hash(12), hash(1200), V1],
    );

    const result = await migrate(pool, SCHEMA);
    expect(result.applied).toContain(11);

    const { rows: columns } = await pool.query<{ column_name: string }>(
      `select column_name from information_schema.columns where table_schema = $1 and table_name = 'ledger'`,
      [SCHEMA],
    );
    expect(columns.map((c) => c.column_name)).not.toContain('record');
    const { rows: bundles } = await pool.query<{ vault: string; lines: number }>(
      `select vault, array_length(string_to_array(body, E'\\n'), 1) as lines from record_bundles order by vault`,
    );
    expect(bundles).toEqual([
      { vault: V1, lines: 3 },
      { vault: V2, lines: 1 },
    ]);

    const store = createProjectionStore(pool);
    const back = await store.transaction(async (tx) => ({
      v1: await tx.ledgerRecords(V1),
      v2: await tx.ledgerRecords(V2),
    }));
    expect(back.v1).toEqual([record(V1, 10, 0), record(V1, 10, 1), record(V1, 12, 0)]);
    expect(back.v2).toEqual([record(V2, 11, 0)]);
  });
});
