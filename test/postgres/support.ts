import type pg from 'pg';
import { expect } from 'vitest';

/**
 * The DML-only writer of the split roles: DDL in the projection schema `schema`, a schema of its
 * own and a table in `public` are each refused (insufficient privilege).
 */
export async function expectNoDdl(writer: pg.Client, schema = 'vault_yield'): Promise<void> {
  for (const sql of [
    `create table ${schema}.x (i int)`,
    `alter table ${schema}.ledger add column x int`,
    `drop table ${schema}.ledger`,
    'create schema mine',
    'create table public.x (i int)',
  ])
    await expect(writer.query(sql), sql).rejects.toMatchObject({ code: '42501' });
}
