import { FOLD_VERSION, vaultId } from '@vault-yield/domain';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectionFoldVersion } from '../admin/status.js';
import { createPgPool, hexToBytes, type Pool } from '../pool/index.js';
import { createProjectionStore } from '../projection/index.js';
import { unframe } from '../projection/tx.js';
import { equitySeries } from '../queries/equity.js';
import { ledgerByTx, ledgerPage } from '../queries/ledger.js';
import { vaultReturnSeries } from '../strategy/stats.js';
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

describe('0011 record bundles, 0012 framed bodies, 0013 marks off the ledger', () => {
  it('moves every ledger record into bundles, in fold order, framed by length, and re-folds read them back', async () => {
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

    // Dead letters: a held record (its block is kept in a column from 0012 on) and bytes that are
    // not JSON, nor even UTF-8 (the migration must not try to read them).
    await pool.query(
      `insert into dead_letters (topic, partition, "offset", key, value, reason, vault, kind, seq)
       values ('t', 0, 1, null, $1, 'gap', $2, 'gap', 7), ('t', 0, 2, null, $3, 'not a record', null, 'decode', null)`,
      [Buffer.from(JSON.stringify({ ...record(V1, 42, 0), seq: 7 })), V1, Buffer.from([0xb1, 0xff, 0x00])],
    );

    // Equity points of V1 (text keys until 0014).
    await pool.query(
      `insert into equity_points (vault, ts, block_number, seq, value_usd, capital_in_usd, capital_out_usd)
       values ($1, 10000, 10, 1, 100, 100, 0), ($1, 12000, 12, 2, 150.5, 100, 0)`,
      [V1],
    );

    const result = await migrate(pool, SCHEMA);
    expect(result.applied).toEqual(expect.arrayContaining([11, 12, 13]));
    const { rows: letters } = await pool.query<{ kind: string; block: string | null }>(
      'select kind, block_number::text as block from dead_letters order by "offset"',
    );
    expect(letters).toEqual([
      { kind: 'gap', block: '42' },
      { kind: 'decode', block: null },
    ]);

    const { rows: columns } = await pool.query<{ column_name: string }>(
      `select column_name from information_schema.columns where table_schema = $1 and table_name = 'ledger'`,
      [SCHEMA],
    );
    expect(columns.map((c) => c.column_name)).not.toContain('record');
    const { rows: bundles } = await pool.query<{ vault: string; frames: Buffer }>(
      'select vault, frames from record_bundles order by vault',
    );
    expect(bundles.map((b) => ({ vault: b.vault, records: unframe(b.frames).length }))).toEqual([
      { vault: V1, records: 3 },
      { vault: V2, records: 1 },
    ]);
    // 0013: bundles written before it are not the authority on their marks (those have ledger rows).
    const { rows: flags } = await pool.query<{ flagged: boolean }>(
      'select bool_or(marks_off_ledger) as flagged from record_bundles',
    );
    expect(flags).toEqual([{ flagged: false }]);
    // Each frame is the record's JSON on one line (the pretty-printed one compacted by 0011).
    expect(unframe(bundles[1]!.frames)[0]!.toString('utf8')).toBe(JSON.stringify(record(V2, 11, 0)));

    const store = createProjectionStore(pool);
    const json = (body: Buffer) =>
      ({ txIndex: 0, ...JSON.parse(body.toString('utf8')) }) as ReturnType<typeof record> & {
        txIndex: number;
      };
    const read = (tx: Parameters<Parameters<typeof store.transaction>[0]>[0], vault: string) =>
      tx
        .vaultRecords(vaultId(1, vault), { decode: json, offLedger: (r) => r.type === 'mark' })
        .then((rs) => rs.map(({ record: { txIndex: _, ...r } }) => r));
    const back = await store.transaction(async (tx) => ({ v1: await read(tx, V1), v2: await read(tx, V2) }));
    expect(back.v1).toEqual([record(V1, 10, 0), record(V1, 10, 1), record(V1, 12, 0)]);
    expect(back.v2).toEqual([record(V2, 11, 0)]);
  });
});

describe('0014 keys of the per-record tables as bytes', () => {
  it('keeps every ledger row and equity point, served as the same text, in the same order', async () => {
    // Runs after the test above: its ledger rows were written as text before 0014.
    const { rows: types } = await pool.query<{ column_name: string; data_type: string }>(
      `select column_name, data_type from information_schema.columns
       where table_schema = $1 and table_name = 'ledger' and column_name in ('vault', 'tx_hash', 'block_hash')
       order by column_name`,
      [SCHEMA],
    );
    expect(types.map((t) => `${t.column_name} ${t.data_type}`)).toEqual([
      'block_hash bytea',
      'tx_hash bytea',
      'vault bytea',
    ]);
    const { rows: equityVault } = await pool.query<{ data_type: string }>(
      `select data_type from information_schema.columns
       where table_schema = $1 and table_name = 'equity_points' and column_name = 'vault'`,
      [SCHEMA],
    );
    expect(equityVault).toEqual([{ data_type: 'bytea' }]);
    const page = await ledgerPage(pool, {
      chainId: 1,
      vault: V1,
      types: ['deposit', 'balance.reconciled'],
      limit: 10,
    });
    expect(page.rows.map((r) => JSON.parse(r) as Record<string, unknown>)).toEqual(
      [
        [12, 2147483646, 2147483646, 1200, 'balance.reconciled'],
        [12, 0, 0, 1200, 'deposit'],
        [10, 1, 1, 1001, 'deposit'],
        [10, 0, 0, 1000, 'deposit'],
      ].map(([block, txIndex, logIndex, tx, type]) => ({
        id: `1:${hash(block as number)}:${hash(tx as number)}:${logIndex}:${V1}`,
        vault: V1,
        chainId: 1,
        type,
        txHash: hash(tx as number),
        blockNumber: block,
        blockHash: hash(block as number),
        txIndex,
        logIndex,
        ts: (block as number) * 1000,
        data: type === 'deposit' ? { n: (block as number) * 10 + (logIndex as number) } : {},
        // written before 0018: no amounts until a rebuild
        amounts: null,
      })),
    );
    expect((await ledgerByTx(pool, hash(1000), ['deposit'])).map((r) => JSON.parse(r).vault)).toEqual([V1]);
    expect(await equitySeries(pool, { chainId: 1, vault: V1, points: 10 })).toEqual([
      // written before 0030: no holding value (null until a rebuild)
      {
        chainId: 1,
        ts: 10000,
        blockNumber: 10,
        valueUsd: 100,
        capitalInUsd: 100,
        capitalOutUsd: 0,
        holdValueUsd: null,
      },
      {
        chainId: 1,
        ts: 12000,
        blockNumber: 12,
        valueUsd: 150.5,
        capitalInUsd: 100,
        capitalOutUsd: 0,
        holdValueUsd: null,
      },
    ]);
    expect([...(await vaultReturnSeries(pool)).keys()]).toEqual([vaultId(1, V1)]);
  });

  it('orders bytes as their lowercase hex text (the events order and cursors rely on it)', async () => {
    const { rows } = await pool.query<{ same: boolean; n: number }>(
      `with h as (select '0x' || md5(i::text) || md5((i * 7)::text) as t from generate_series(1, 5000) i)
       select array_agg(t order by t collate "C") = array_agg(t order by ${hexToBytes('t')}) as same,
              count(*)::int as n
       from h`,
    );
    expect(rows).toEqual([{ same: true, n: 5000 }]);
  });
});

describe('0015 / 0016 / 0023 / 0030 fold version', () => {
  it('stamps a projection that holds equity points as folded by fold 1, a fresh one by this fold', async () => {
    expect(await projectionFoldVersion(pool, SCHEMA)).toBe(1);
    expect(await projectionFoldVersion(pool, db.schema)).toBe(FOLD_VERSION);
    expect(FOLD_VERSION).toBe(5); // a new fold version comes with a migration stamping fresh schemas
  });

  it('0030: a schema of fold 4 holding equity points keeps 4 and its points no holding value; an empty one is stamped 5', async () => {
    const build = async (schema: string, points: boolean) => {
      const c = await pool.connect();
      try {
        await c.query(`create schema ${schema}`);
        await c.query(`set search_path to ${schema}`);
        await c.query(
          'create table schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now(), checksum text)',
        );
        for (const m of migrations().filter((m) => m.version <= 29)) {
          await c.query(m.sql);
          await c.query('insert into schema_migrations (version, name, checksum) values ($1, $2, $3)', [
            m.version,
            m.name,
            m.checksum,
          ]);
        }
        if (points)
          await c.query(
            `insert into equity_points (chain_id, vault, ts, block_number, seq, value_usd, capital_in_usd, capital_out_usd, strategy, return_index)
             values (1, ${hexToBytes('$1')}, 10000, 10, 1, 100, 100, 0, 'wide', 1)`,
            [V1],
          );
      } finally {
        c.release();
      }
      expect(await projectionFoldVersion(pool, schema)).toBe(4);
      expect((await migrate(pool, schema)).applied).toEqual(
        migrations()
          .filter((m) => m.version >= 30)
          .map((m) => m.version),
      );
    };
    await build('upgrade_0029_folded', true);
    await build('upgrade_0029_empty', false);
    expect(await projectionFoldVersion(pool, 'upgrade_0029_folded')).toBe(4);
    expect(await projectionFoldVersion(pool, 'upgrade_0029_empty')).toBe(5);
    const { rows: column } = await pool.query<{ data_type: string; is_nullable: string }>(
      `select data_type, is_nullable from information_schema.columns
       where table_schema = 'upgrade_0029_folded' and table_name = 'equity_points' and column_name = 'hold_usd'`,
    );
    expect(column).toEqual([{ data_type: 'numeric', is_nullable: 'YES' }]);
    const folded = createPgPool({
      url: db.writerUrl,
      schema: 'upgrade_0029_folded',
      applicationName: 'upgrade-0030',
      max: 1,
    });
    try {
      expect(await equitySeries(folded, { chainId: 1, vault: V1, points: 10 })).toEqual([
        {
          chainId: 1,
          ts: 10000,
          blockNumber: 10,
          valueUsd: 100,
          capitalInUsd: 100,
          capitalOutUsd: 0,
          holdValueUsd: null,
        },
      ]);
    } finally {
      await folded.end();
    }
  });
});
