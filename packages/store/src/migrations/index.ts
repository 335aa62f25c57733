import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ident, type Pool } from '../pool/index.js';
import { lockWebhookTables } from '../webhooks/index.js';

export interface Migration {
  version: number;
  name: string;
  /** The file it was read from, `NNNN_name.sql`. */
  file: string;
  sql: string;
  /** sha256 of the file's text (hex), line endings taken as `\n`: what `schema_migrations.checksum` records. */
  checksum: string;
}

const dir = dirname(fileURLToPath(import.meta.url));

/** sha256 (hex) of a migration's text; CRLF counts as LF, so a checkout's line endings never change it. */
export const migrationChecksum = (sql: string): string =>
  createHash('sha256').update(sql.replace(/\r\n/g, '\n')).digest('hex');

/** Reads the migrations in `from` (`NNNN_name.sql`), in order. Uncached: see migrations(). */
export function loadMigrations(from: string): Migration[] {
  return readdirSync(from)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const sql = readFileSync(join(from, f), 'utf8');
      return Object.freeze({
        version: Number(f.slice(0, 4)),
        name: f.slice(5, -4),
        file: f,
        sql,
        checksum: migrationChecksum(sql),
      });
    });
}

let shipped: readonly Migration[] | undefined;

/**
 * The versioned migrations shipped with this package, in order: read from disk once per process
 * (`/ready` asks for the latest version on every probe).
 */
export function migrations(): Migration[] {
  shipped ??= Object.freeze(loadMigrations(dir));
  return [...shipped];
}

export const latestVersion = (): number => migrations().at(-1)?.version ?? 0;

/** Which migrations migrate() and migrationStatus() compare with the schema (default: the shipped ones). */
export interface MigrationSource {
  migrations?: readonly Migration[];
}

/** migrate()'s options: the migrations to apply, and the runtime writer role to grant DML to. */
export interface MigrateOptions extends MigrationSource {
  /**
   * The runtime writer (indexer, projector): granted usage on the schema and select, insert,
   * update, delete on its tables (sequences: usage, select, update), now and by default
   * privileges on what the migrating role creates there later. It gets no DDL: the migrating role
   * (the migrator) owns the schema.
   */
  writerRole?: string;
}

/** Versions applied in `schema`, or [] when the schema has never been migrated. */
export async function appliedVersions(pool: Pool, schema: string): Promise<number[]> {
  if (!(await hasMigrationsTable(pool, schema))) return [];
  const applied = await pool.query<{ version: number }>(
    `select version from ${ident(schema)}.schema_migrations order by version`,
  );
  return applied.rows.map((r) => r.version);
}

type Queryable = Pick<Pool, 'query'>;

async function hasMigrationsTable(db: Queryable, schema: string): Promise<boolean> {
  const { rows } = await db.query<{ exists: boolean }>(
    `select exists (select 1 from information_schema.tables where table_schema = $1 and table_name = 'schema_migrations')`,
    [schema],
  );
  return rows[0]?.exists === true;
}

/** One row of schema_migrations; `checksum` null when applied before checksums were recorded. */
interface AppliedRow {
  version: number;
  name: string;
  applied_at: Date;
  checksum: string | null;
}

async function hasChecksumColumn(db: Queryable, schema: string): Promise<boolean> {
  const { rows } = await db.query<{ exists: boolean }>(
    `select exists (select 1 from information_schema.columns
      where table_schema = $1 and table_name = 'schema_migrations' and column_name = 'checksum')`,
    [schema],
  );
  return rows[0]?.exists === true;
}

/** The table's rows; a table of a build before checksums reads as every checksum null. */
async function appliedRows(db: Queryable, schema: string): Promise<AppliedRow[]> {
  const checksum = (await hasChecksumColumn(db, schema)) ? 'checksum' : 'null::text as checksum';
  const { rows } = await db.query<AppliedRow>(
    `select version, name, applied_at, ${checksum} from ${ident(schema)}.schema_migrations order by version`,
  );
  return rows;
}

/** An applied migration whose file is no longer what was applied. */
export interface ChangedMigration {
  file: string;
  /** Checksum recorded when it was applied. */
  applied: string;
  /** Checksum of the file now. */
  now: string;
}

/**
 * Thrown by migrate() when an applied migration's file changed since it was applied: its SQL no
 * longer says what the schema holds. Nothing is applied. Restore the file (a schema change goes in
 * a new migration), or, for a schema that is expendable, drop it and migrate again.
 */
export class MigrationChecksumError extends Error {
  constructor(
    readonly schema: string,
    readonly changed: readonly ChangedMigration[],
  ) {
    super(
      `refusing to migrate schema ${schema}: applied migration${changed.length > 1 ? 's' : ''} changed since applied: ${changed
        .map((c) => `${c.file} (applied sha256 ${c.applied.slice(0, 12)}…, file now ${c.now.slice(0, 12)}…)`)
        .join(
          ', ',
        )}. Restore the file${changed.length > 1 ? 's' : ''} as applied and put the change in a new migration.`,
    );
    this.name = 'MigrationChecksumError';
  }
}

export interface MigrateResult {
  schema: string;
  applied: number[];
  /** Versions applied before checksums were kept, whose checksum this run recorded (from their files). */
  recorded: number[];
  current: number;
}

/**
 * Applies pending migrations to `schema` in one transaction under an advisory lock, so
 * concurrent callers serialise and a failed migration leaves nothing half-applied.
 *
 * Each applied migration's checksum is kept in `schema_migrations.checksum`; a migration applied
 * before checksums were kept (the column is added to an older table) gets its file's checksum on
 * the first run. An applied migration whose file no longer has its checksum is refused
 * (MigrationChecksumError, naming the file) and nothing is applied.
 */
export async function migrate(
  pool: Pool,
  schema: string,
  readerRole?: string,
  source: MigrateOptions = {},
): Promise<MigrateResult> {
  const files = source.migrations ?? migrations();
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('select pg_advisory_xact_lock(hashtext($1))', [`vault-yield-migrate:${schema}`]);
    await client.query(`create schema if not exists ${ident(schema)}`);
    await client.query(`set local search_path to ${ident(schema)}`);
    await client.query(
      `create table if not exists schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now(), checksum text)`,
    );
    // A table of a build before checksums gets the column (filled below from the files); only
    // then is the table locked for the change (readers' /ready probes read it).
    if (!(await hasChecksumColumn(client, schema)))
      await client.query('alter table schema_migrations add column checksum text');
    const rows = await appliedRows(client, schema);
    const byVersion = new Map(files.map((m) => [m.version, m]));
    const changed: ChangedMigration[] = [];
    const unrecorded: Migration[] = [];
    for (const row of rows) {
      const file = byVersion.get(row.version);
      if (!file) continue; // applied by a newer build: not this one's to judge
      if (row.checksum === null) unrecorded.push(file);
      else if (row.checksum !== file.checksum)
        changed.push({ file: file.file, applied: row.checksum, now: file.checksum });
    }
    if (changed.length) throw new MigrationChecksumError(schema, changed);
    for (const m of unrecorded)
      await client.query('update schema_migrations set checksum = $2 where version = $1', [
        m.version,
        m.checksum,
      ]);
    const done = new Set(rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of files) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('insert into schema_migrations (version, name, checksum) values ($1, $2, $3)', [
        m.version,
        m.name,
        m.checksum,
      ]);
      applied.push(m.version);
    }
    if (readerRole) await grantRead(client, schema, readerRole);
    if (source.writerRole) await grantWrite(client, schema, source.writerRole);
    // Whatever the options: no role but the owner and the webhooks role keeps a privilege on the
    // webhook tables (a reader granted by default privileges when 0020/0025 created them, or by
    // an earlier migrate with READER_ROLE, loses it here even when this run names no reader).
    await lockWebhookTables(client, schema);
    // Views of this schema (a views schema whose live schema it is): a column a migration added
    // is in them at once — `select *` views keep the columns of their creation otherwise, and a
    // reader on the views would ask for a column its view lacks.
    if (applied.length > 0) await refreshViewsOf(client, schema);
    await client.query('commit');
    return {
      schema,
      applied,
      recorded: unrecorded.map((m) => m.version),
      current: files.at(-1)?.version ?? 0,
    };
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Re-creates, in every views schema whose live schema is `schema` (its `vy_live` row), the views
 * of `schema`'s tables as `create or replace view … as select *`: columns added at the end appear,
 * grants stay. A migration that dropped or reordered a column cannot be followed so: the error
 * says to switch the views again (`vault-yield rebuild`'s switch re-creates them whole).
 */
async function refreshViewsOf(client: Queryable, schema: string): Promise<void> {
  const { rows: viewsSchemas } = await client.query<{ views: string }>(
    `select n.nspname as views from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relname = 'vy_live' and c.relkind = 'r'`,
  );
  for (const { views } of viewsSchemas) {
    const live = await client.query<{ schema: string }>(
      `select schema from ${ident(views)}.vy_live where id`,
    );
    if (live.rows[0]?.schema !== schema) continue;
    // The views of the views schema that stand on a table of this schema (by name), in one query.
    const { rows: viewed } = await client.query<{ name: string }>(
      `select v.relname as name
         from pg_class v join pg_namespace vn on vn.oid = v.relnamespace
         join pg_class t on t.relname = v.relname and t.relkind in ('r', 'p')
         join pg_namespace tn on tn.oid = t.relnamespace
        where vn.nspname = $1 and v.relkind = 'v' and tn.nspname = $2`,
      [views, schema],
    );
    for (const { name } of viewed) {
      try {
        await client.query('savepoint refresh_view');
        await client.query(
          `create or replace view ${ident(views)}.${ident(name)} as select * from ${ident(schema)}.${ident(name)}`,
        );
        await client.query('release savepoint refresh_view');
      } catch (err) {
        await client.query('rollback to savepoint refresh_view');
        throw new Error(
          `views ${views}.${name} cannot follow the migration of ${schema} (${(err as Error).message}): switch the views again (vault-yield rebuild, or its switch)`,
          { cause: err },
        );
      }
    }
    // A table a migration added (e.g. 0021's stream_commits) gets its view at once, readable by
    // the roles that read the views already (those granted select on vault_snapshot's view), as
    // the switch would make it. The indexer's own tables never get one (admin/switch.ts).
    const { rows: added } = await client.query<{ name: string }>(
      `select t.relname as name from pg_class t join pg_namespace tn on tn.oid = t.relnamespace
        where tn.nspname = $2 and t.relkind in ('r', 'p') and t.relname not like 'indexer\\_%'
          and t.relname not like 'webhook\\_%' and not exists (select 1 from pg_class v join pg_namespace vn on vn.oid = v.relnamespace
                           where vn.nspname = $1 and v.relname = t.relname)`,
      [views, schema],
    );
    if (added.length === 0) continue;
    const { rows: readers } = await client.query<{ grantee: string }>(
      `select distinct grantee from information_schema.role_table_grants
        where table_schema = $1 and table_name = 'vault_snapshot' and privilege_type = 'SELECT'
          and grantee <> current_user`,
      [views],
    );
    for (const { name } of added) {
      await client.query(
        `create view ${ident(views)}.${ident(name)} as select * from ${ident(schema)}.${ident(name)}`,
      );
      for (const { grantee } of readers)
        await client.query(`grant select on ${ident(views)}.${ident(name)} to ${ident(grantee)}`);
    }
  }
}

/**
 * How an applied migration's recorded checksum compares with its file: `match`; `changed` (migrate
 * refuses the schema); `unrecorded` (applied before checksums were kept: the next migrate records
 * it); `no-file` (applied by a build that ships a migration this one does not).
 */
export type ChecksumState = 'match' | 'changed' | 'unrecorded' | 'no-file';

export interface MigrationStatusEntry {
  version: number;
  name: string;
  file: string;
  state: 'applied' | 'pending';
  /** The file's checksum (the recorded one when there is no file). */
  checksum: string | null;
  /** Null for a pending migration. */
  checksumState: ChecksumState | null;
  appliedAt: Date | null;
}

export interface MigrationStatus {
  schema: string;
  entries: MigrationStatusEntry[];
  applied: number;
  pending: number;
  /** Files of applied migrations that changed since (migrate refuses the schema while any). */
  changed: string[];
}

/** Each migration of `schema`, applied or pending, with its checksum state. Reads only. */
export async function migrationStatus(
  db: Queryable,
  schema: string,
  source: MigrationSource = {},
): Promise<MigrationStatus> {
  const files = source.migrations ?? migrations();
  const rows = (await hasMigrationsTable(db, schema)) ? await appliedRows(db, schema) : [];
  const applied = new Map(rows.map((r) => [r.version, r]));
  const entries: MigrationStatusEntry[] = files.map((m) => {
    const row = applied.get(m.version);
    if (!row)
      return {
        version: m.version,
        name: m.name,
        file: m.file,
        state: 'pending',
        checksum: m.checksum,
        checksumState: null,
        appliedAt: null,
      };
    return {
      version: m.version,
      name: m.name,
      file: m.file,
      state: 'applied',
      checksum: m.checksum,
      checksumState: row.checksum === null ? 'unrecorded' : row.checksum === m.checksum ? 'match' : 'changed',
      appliedAt: row.applied_at,
    };
  });
  const shipped = new Set(files.map((m) => m.version));
  for (const row of rows) {
    if (shipped.has(row.version)) continue;
    entries.push({
      version: row.version,
      name: row.name,
      file: `${String(row.version).padStart(4, '0')}_${row.name}.sql`,
      state: 'applied',
      checksum: row.checksum,
      checksumState: 'no-file',
      appliedAt: row.applied_at,
    });
  }
  entries.sort((a, b) => a.version - b.version);
  return {
    schema,
    entries,
    applied: entries.filter((e) => e.state === 'applied').length,
    pending: entries.filter((e) => e.state === 'pending').length,
    changed: entries.filter((e) => e.checksumState === 'changed').map((e) => e.file),
  };
}

/** Read-only access for the reader role: schema usage and select on every table, now and later. */
async function grantRead(client: Queryable, schema: string, role: string) {
  const s = ident(schema);
  const r = ident(role);
  await client.query(`grant usage on schema ${s} to ${r}`);
  await client.query(`grant select on all tables in schema ${s} to ${r}`);
  await client.query(`alter default privileges in schema ${s} grant select on tables to ${r}`);
  await lockWebhookTables(client, schema);
}

/**
 * DML for the runtime writer role: schema usage, and select, insert, update, delete on every
 * table (usage, select, update on every sequence), now and — default privileges of the migrating
 * role in this schema — on what it creates there later. No create, alter or drop: the schema and
 * its tables belong to the migrating role.
 */
export async function grantWrite(client: Queryable, schema: string, role: string): Promise<void> {
  const s = ident(schema);
  const r = ident(role);
  await client.query(`grant usage on schema ${s} to ${r}`);
  await client.query(`grant select, insert, update, delete on all tables in schema ${s} to ${r}`);
  await client.query(`grant usage, select, update on all sequences in schema ${s} to ${r}`);
  await client.query(
    `alter default privileges in schema ${s} grant select, insert, update, delete on tables to ${r}`,
  );
  await client.query(
    `alter default privileges in schema ${s} grant usage, select, update on sequences to ${r}`,
  );
  // The blanket grant above reached the webhook tables: they are the webhooks role's alone.
  await lockWebhookTables(client, schema);
}

/** Drops `schema` and everything in it (the demo starts from nothing; rebuilds retire schemas). */
export async function resetSchema(pool: Pool, schema: string): Promise<void> {
  await pool.query(`drop schema if exists ${ident(schema)} cascade`);
}
