import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareSchemas } from '../admin/checksum.js';
import { createPgPool, type Pool } from '../pool/index.js';
import { readiness } from '../queries/readiness.js';
import {
  latestVersion,
  loadMigrations,
  MigrationChecksumError,
  migrate,
  migrationChecksum,
  migrationStatus,
  migrations,
} from './index.js';

/** Checksums of applied migrations, migrate --status's view, files read once per process. */

let db: TestDatabase;
let pool: Pool;
const dirs: string[] = [];

/** A copy of the shipped migration files, to change one without touching the package. */
function copyOfMigrations(): string {
  const to = mkdtempSync(join(tmpdir(), 'migrations-'));
  dirs.push(to);
  const from = dirname(fileURLToPath(import.meta.url));
  for (const f of readdirSync(from).filter((f) => f.endsWith('.sql'))) cpSync(join(from, f), join(to, f));
  return to;
}

const checksums = async (schema: string) =>
  (
    await pool.query<{ version: number; checksum: string | null }>(
      `select version, checksum from ${schema}.schema_migrations order by version`,
    )
  ).rows;

beforeAll(async () => {
  db = await createTestDatabase('migration_checksums');
  pool = createPgPool({ url: db.writerUrl, applicationName: 'checksum-test', max: 2 });
});
afterAll(async () => {
  await pool.end();
  await db.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('migration files', () => {
  it('are read once per process: every call hands out the same migrations', () => {
    const a = migrations();
    const b = migrations();
    expect(a.length).toBeGreaterThanOrEqual(16);
    // A re-read would make new objects.
    for (const [i, m] of a.entries()) expect(b[i]).toBe(m);
    // The list handed out is a copy: a caller's filter or push cannot change the next caller's.
    a.pop();
    expect(migrations()).toHaveLength(b.length);
    expect(latestVersion()).toBe(b.at(-1)?.version);
  });

  it('carry the sha256 of their text, line endings as LF', () => {
    const m = migrations()[0]!;
    expect(m.file).toBe('0001_init.sql');
    expect(m.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(m.checksum).toBe(migrationChecksum(m.sql));
    expect(migrationChecksum('select 1;\r\nselect 2;\r\n')).toBe(migrationChecksum('select 1;\nselect 2;\n'));
    expect(migrationChecksum('select 1;')).not.toBe(migrationChecksum('select 2;'));
  });
});

describe('migrate keeps a checksum per applied file', () => {
  it('records each applied file’s checksum (the harness migrated the test schema)', async () => {
    const rows = await checksums(db.schema);
    expect(rows.map((r) => r.version)).toEqual(migrations().map((m) => m.version));
    expect(rows.map((r) => r.checksum)).toEqual(migrations().map((m) => m.checksum));
    const again = await migrate(pool, db.schema);
    expect(again).toMatchObject({ applied: [], recorded: [], current: latestVersion() });
  });

  it('refuses a schema whose applied file changed, naming the file, and applies nothing', async () => {
    const schema = 'changed_file';
    const dir = copyOfMigrations();
    const first = loadMigrations(dir).filter((m) => m.version <= 5);
    await migrate(pool, schema, undefined, { migrations: first });

    // 0003 is edited after it was applied, and a new migration waits behind it.
    const file = readdirSync(dir).find((f) => f.startsWith('0003_'))!;
    writeFileSync(join(dir, file), `${loadMigrations(dir)[2]!.sql}\n-- an edit after the fact\n`);
    const changed = loadMigrations(dir).filter((m) => m.version <= 6);
    const err = await migrate(pool, schema, undefined, { migrations: changed }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MigrationChecksumError);
    expect((err as MigrationChecksumError).message).toContain(file);
    expect((err as MigrationChecksumError).message).toContain(schema);
    expect((err as MigrationChecksumError).changed.map((c) => c.file)).toEqual([file]);
    // Nothing applied: 0006 still pending, the recorded checksum still the applied file's.
    expect((await checksums(schema)).map((r) => r.version)).toEqual([1, 2, 3, 4, 5]);
    expect((await checksums(schema))[2]!.checksum).toBe(first[2]!.checksum);

    const status = await migrationStatus(pool, schema, { migrations: changed });
    expect(status.changed).toEqual([file]);
    expect(status.entries.find((e) => e.file === file)?.checksumState).toBe('changed');
    expect(status.entries.find((e) => e.version === 6)).toMatchObject({
      state: 'pending',
      checksumState: null,
    });

    // The file restored as applied: migrate goes on.
    const restored = loadMigrations(copyOfMigrations()).filter((m) => m.version <= 6);
    const ok = await migrate(pool, schema, undefined, { migrations: restored });
    expect(ok.applied).toEqual([6]);
  });

  it('refuses a changed shipped file too (checksum recorded differs from the file)', async () => {
    const schema = 'tampered';
    await migrate(pool, schema);
    await pool.query(`update ${schema}.schema_migrations set checksum = repeat('0', 64) where version = 2`);
    await expect(migrate(pool, schema)).rejects.toThrow(/0002_catalogue\.sql/);
  });
});

describe('migrationStatus', () => {
  it('lists every file pending on a schema never migrated', async () => {
    const status = await migrationStatus(pool, 'never_migrated');
    expect(status).toMatchObject({
      schema: 'never_migrated',
      applied: 0,
      pending: migrations().length,
      changed: [],
    });
    expect(status.entries.map((e) => e.file)).toEqual(migrations().map((m) => m.file));
    expect(status.entries.every((e) => e.state === 'pending' && e.appliedAt === null)).toBe(true);
  });

  it('lists applied files with their checksum state and the rest pending', async () => {
    const schema = 'half_migrated';
    await migrate(pool, schema, undefined, { migrations: migrations().filter((m) => m.version <= 8) });
    const status = await migrationStatus(pool, schema);
    expect(status.applied).toBe(8);
    expect(status.pending).toBe(migrations().length - 8);
    for (const e of status.entries) {
      if (e.version <= 8) {
        expect(e).toMatchObject({ state: 'applied', checksumState: 'match' });
        expect(e.appliedAt).toBeInstanceOf(Date);
      } else expect(e).toMatchObject({ state: 'pending', checksumState: null, appliedAt: null });
    }
  });

  it('names an applied migration this build does not ship', async () => {
    const schema = 'from_newer_build';
    await migrate(pool, schema);
    await pool.query(
      `insert into ${schema}.schema_migrations (version, name, checksum) values (9999, 'from_the_future', null)`,
    );
    const status = await migrationStatus(pool, schema);
    expect(status.entries.at(-1)).toMatchObject({
      version: 9999,
      file: '9999_from_the_future.sql',
      state: 'applied',
      checksumState: 'no-file',
    });
    // Not this build's to judge: migrate does not refuse it.
    await expect(migrate(pool, schema)).resolves.toMatchObject({ applied: [] });
  });
});

describe('a database migrated before checksums were kept', () => {
  const schema = 'before_checksums';
  beforeAll(async () => {
    // The table as builds before checksums made it, and migrations 1–6 applied by them.
    await pool.query(`create schema ${schema}`);
    await pool.query(
      `create table ${schema}.schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())`,
    );
    const c = await pool.connect();
    try {
      await c.query(`set search_path to ${schema}`);
      for (const m of migrations().filter((m) => m.version <= 6)) {
        await c.query(m.sql);
        await c.query('insert into schema_migrations (version, name) values ($1, $2)', [m.version, m.name]);
      }
    } finally {
      await c.query('reset search_path');
      c.release();
    }
  });

  it('compares equal to a schema with checksums in verify (the column is not compared)', async () => {
    // (Its rows differ: 6 applied against every one. Its columns must not.)
    const [diff] = await compareSchemas(pool, schema, db.schema, { tables: ['schema_migrations'] });
    expect(diff).toMatchObject({ table: 'schema_migrations', columnsOnlyLeft: [], columnsOnlyRight: [] });
  });

  it('reads as unrecorded in the status, and stays readable by /ready', async () => {
    const status = await migrationStatus(pool, schema);
    expect(status.entries.filter((e) => e.version <= 6).map((e) => e.checksumState)).toEqual(
      Array(6).fill('unrecorded'),
    );
    expect(status.pending).toBe(migrations().length - 6);
    expect(await readiness(pool, schema)).toMatchObject({ applied: 6, current: false });
  });

  it('upgrades: the first migrate records the applied files’ checksums and applies the rest', async () => {
    const result = await migrate(pool, schema);
    expect(result.recorded).toEqual([1, 2, 3, 4, 5, 6]);
    expect(result.applied).toEqual(
      migrations()
        .filter((m) => m.version > 6)
        .map((m) => m.version),
    );
    expect((await checksums(schema)).map((r) => r.checksum)).toEqual(migrations().map((m) => m.checksum));
    const status = await migrationStatus(pool, schema);
    expect(status.entries.every((e) => e.checksumState === 'match')).toBe(true);
    expect(await migrate(pool, schema)).toMatchObject({ applied: [], recorded: [] });
    expect(await readiness(pool, schema)).toMatchObject({ current: true });
  });
});

describe('migrate follows the views of the schema it migrates', () => {
  it('a column a migration adds is in the views at once (create or replace): a reader on the views can ask for it', async () => {
    const schema = `${db.schema}_viewed`;
    const views = `${db.schema}_views`;
    await migrate(pool, schema, undefined, { migrations: migrations().filter((m) => m.version < 18) });
    await pool.query(`create schema ${views}`);
    await pool.query(`create table ${views}.vy_live (id boolean primary key, schema text not null)`);
    await pool.query(`insert into ${views}.vy_live (id, schema) values (true, $1)`, [schema]);
    await pool.query(`create view ${views}.ledger as select * from ${schema}.ledger`);
    const columns = async () =>
      (
        await pool.query<{ c: string }>(
          `select column_name as c from information_schema.columns where table_schema = $1 and table_name = 'ledger'`,
          [views],
        )
      ).rows.map((r) => r.c);
    expect(await columns()).not.toContain('amounts');
    await migrate(pool, schema);
    expect(await columns()).toContain('amounts');
  });
});
