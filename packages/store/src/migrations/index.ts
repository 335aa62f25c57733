import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ident, type Pool } from '../pool/index.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const dir = dirname(fileURLToPath(import.meta.url));

/** The versioned migrations shipped with this package, in order (`NNNN_name.sql`). */
export function migrations(): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({
      version: Number(f.slice(0, 4)),
      name: f.slice(5, -4),
      sql: readFileSync(join(dir, f), 'utf8'),
    }));
}

export const latestVersion = (): number => migrations().at(-1)?.version ?? 0;

/** Versions applied in `schema`, or [] when the schema has never been migrated. */
export async function appliedVersions(pool: Pool, schema: string): Promise<number[]> {
  const { rows } = await pool.query<{ exists: boolean }>(
    `select exists (select 1 from information_schema.tables where table_schema = $1 and table_name = 'schema_migrations')`,
    [schema],
  );
  if (!rows[0]?.exists) return [];
  const applied = await pool.query<{ version: number }>(
    `select version from ${ident(schema)}.schema_migrations order by version`,
  );
  return applied.rows.map((r) => r.version);
}

export interface MigrateResult {
  schema: string;
  applied: number[];
  current: number;
}

/**
 * Applies pending migrations to `schema` in one transaction under an advisory lock, so
 * concurrent callers serialise and a failed migration leaves nothing half-applied.
 */
export async function migrate(pool: Pool, schema: string, readerRole?: string): Promise<MigrateResult> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('select pg_advisory_xact_lock(hashtext($1))', [`vault-yield-migrate:${schema}`]);
    await client.query(`create schema if not exists ${ident(schema)}`);
    await client.query(`set local search_path to ${ident(schema)}`);
    await client.query(
      `create table if not exists schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())`,
    );
    const done = new Set(
      (await client.query<{ version: number }>('select version from schema_migrations')).rows.map(
        (r) => r.version,
      ),
    );
    const applied: number[] = [];
    for (const m of migrations()) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('insert into schema_migrations (version, name) values ($1, $2)', [
        m.version,
        m.name,
      ]);
      applied.push(m.version);
    }
    if (readerRole) await grantRead(client, schema, readerRole);
    await client.query('commit');
    return { schema, applied, current: latestVersion() };
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Read-only access for the reader role: schema usage and select on every table, now and later. */
async function grantRead(client: { query(sql: string): Promise<unknown> }, schema: string, role: string) {
  const s = ident(schema);
  const r = ident(role);
  await client.query(`grant usage on schema ${s} to ${r}`);
  await client.query(`grant select on all tables in schema ${s} to ${r}`);
  await client.query(`alter default privileges in schema ${s} grant select on tables to ${r}`);
}

/** Drops `schema` and everything in it (the demo starts from nothing; rebuilds retire schemas). */
export async function resetSchema(pool: Pool, schema: string): Promise<void> {
  await pool.query(`drop schema if exists ${ident(schema)} cascade`);
}
