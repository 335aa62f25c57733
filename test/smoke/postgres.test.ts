import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('postgres roles', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('smoke');
  });
  afterAll(() => db.drop());

  async function asRole(url: string, ...statements: string[]) {
    const client = new pg.Client({ connectionString: url, options: `-c search_path=${db.schema}` });
    await client.connect();
    try {
      let result: pg.QueryResult | undefined;
      for (const sql of statements) result = await client.query(sql);
      return result!;
    } finally {
      await client.end();
    }
  }

  it('the writer role writes and reads projections', async () => {
    await asRole(
      db.writerUrl,
      `insert into indexer_checkpoint (chain_id, block_number, block_hash) values (1, 5, '0xabc')`,
    );
    const { rows } = await asRole(db.writerUrl, 'select block_number from indexer_checkpoint');
    expect(rows).toEqual([{ block_number: 5 }]);
  });

  it('the read-only role reads but cannot write', async () => {
    const { rows } = await asRole(db.readerUrl, 'select count(*)::int as n from indexer_checkpoint');
    expect(rows[0].n).toBe(1);
    await expect(
      asRole(
        db.readerUrl,
        `insert into indexer_checkpoint (chain_id, block_number, block_hash) values (2, 1, '0x')`,
      ),
    ).rejects.toThrow(/read-only transaction|permission denied/);
    await expect(asRole(db.readerUrl, 'delete from indexer_checkpoint')).rejects.toThrow(
      /read-only transaction|permission denied/,
    );
    await expect(asRole(db.readerUrl, 'create table evil (x int)')).rejects.toThrow(
      /read-only transaction|permission denied/,
    );
  });

  it('the read-only role is denied even when it turns read-only off', async () => {
    await expect(
      asRole(
        db.readerUrl,
        'set default_transaction_read_only = off',
        `insert into indexer_checkpoint (chain_id, block_number, block_hash) values (3, 1, '0x')`,
      ),
    ).rejects.toThrow(/permission denied/);
  });
});
