import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/harness/index.js';
import { createPgPool, type Pool } from '../pool/index.js';
import {
  ledgerPage,
  readiness,
  screenMeta,
  snapshotOf,
  snapshotsOf,
  strategyList,
  vaultPage,
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
    const row = await snapshotOf(reader, vault);
    expect(JSON.parse(row!.json)).toEqual({ vault: 'x', n: 1.5 });
    expect(row!.etag).toMatch(/^[0-9a-f]{32}$/);
    await writer.query(`update vault_snapshot set records_applied = 4 where vault = $1`, [vault]);
    expect((await snapshotOf(reader, vault))!.etag).not.toBe(row!.etag);
    expect(await snapshotOf(reader, `0x${'c'.repeat(40)}`)).toBeNull();
    const many = await snapshotsOf(reader, [vault, `0x${'c'.repeat(40)}`]);
    expect([...many.keys()]).toEqual([vault]);
  });

  it('ledger page with no types is empty without a query; vault list pages; empty catalogue', async () => {
    expect(await ledgerPage(reader, { vault, types: [], limit: 5 })).toEqual({ rows: [], next: null });
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
});
