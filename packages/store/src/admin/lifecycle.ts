import { latestVersion, migrate } from '../migrations/index.js';
import { ident, type Pool } from '../pool/index.js';
import { getBuild, liveRecord } from './meta.js';

type Queryable = Pick<Pool, 'query'>;

export interface DeferredIndex {
  name: string;
  /** `CREATE INDEX … ON schema.table …`, schema-qualified. */
  def: string;
}

export async function schemaExists(db: Queryable, schema: string): Promise<boolean> {
  const { rows } = await db.query<{ ok: boolean }>(
    'select exists (select 1 from pg_namespace where nspname = $1) as ok',
    [schema],
  );
  return rows[0]?.ok ?? false;
}

/** Base tables of a schema (ordinary relations, logged or not), sorted. */
export async function schemaTables(db: Queryable, schema: string): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = $1 and c.relkind in ('r', 'p') order by c.relname`,
    [schema],
  );
  return rows.map((r) => r.name);
}

/**
 * Roles that read the views of `viewsSchema` now — SELECT on any of its views, held by a role other
 * than the views' owner and the current role (`public` for PUBLIC) — sorted. A switch re-creates
 * the views, and a build makes the schema they will stand on: both grant these roles what they
 * read, so no reader loses a view whatever options the command got (READER_ROLE or not).
 */
export async function viewReaders(db: Queryable, viewsSchema: string): Promise<string[]> {
  const { rows } = await db.query<{ role: string }>(
    `select distinct case when a.grantee = 0 then 'public' else r.rolname end as role
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       cross join lateral aclexplode(c.relacl) a
       left join pg_roles r on r.oid = a.grantee
      where n.nspname = $1 and c.relkind = 'v' and a.privilege_type = 'SELECT'
        and a.grantee <> c.relowner and a.grantee <> (select oid from pg_roles where rolname = current_user)
      order by 1`,
    [viewsSchema],
  );
  return rows.map((r) => r.role);
}

/**
 * Roles that write the projection in `schema` now — INSERT on its stored offsets
 * (`consumer_offsets`), held by a role other than the table's owner and the current role — sorted
 * (none when the schema is gone). A build grants them its schema, so a projector that follows the
 * switch (FOLLOW_LIVE, as the writer) can write where it moves, WRITER_ROLE given or not.
 */
export async function schemaWriters(db: Queryable, schema: string): Promise<string[]> {
  const { rows } = await db.query<{ role: string }>(
    `select distinct r.rolname as role
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       cross join lateral aclexplode(c.relacl) a
       join pg_roles r on r.oid = a.grantee
      where n.nspname = $1 and c.relname = 'consumer_offsets' and a.privilege_type = 'INSERT'
        and a.grantee <> c.relowner and r.rolname <> current_user
      order by 1`,
    [schema],
  );
  return rows.map((r) => r.role);
}

/** `given` (when set) and `found`, once each, in that order. */
export const withRoles = (given: string | undefined, found: string[]): string[] => [
  ...new Set([...(given ? [given] : []), ...found]),
];

/** Highest migration applied to `schema` (0 when never migrated) and whether that is current. */
export async function schemaVersion(
  db: Queryable,
  schema: string,
): Promise<{ applied: number; current: boolean }> {
  const { rows } = await db.query<{ v: number | null }>(
    `select case when to_regclass($1) is null then null else 1 end as v`,
    [`${ident(schema)}.schema_migrations`],
  );
  if (rows[0]?.v == null) return { applied: 0, current: false };
  const max = await db.query<{ v: number | null }>(
    `select max(version) as v from ${ident(schema)}.schema_migrations`,
  );
  const applied = max.rows[0]?.v ?? 0;
  return { applied, current: applied >= latestVersion() };
}

export interface PrepareOptions {
  viewsSchema: string;
  schema: string;
  /** Granted read access, besides the roles that read the views now (viewReaders). */
  readerRole?: string;
  /**
   * The runtime writer role, granted DML on the build's tables (it writes there once live),
   * besides the roles that write the live schema now (schemaWriters).
   */
  writerRole?: string;
  /** Make every table unlogged while the schema is built (no WAL; SET LOGGED at finalize). */
  unlogged: boolean;
  /** Drop the non-unique secondary indexes while building; finalize recreates them. */
  deferIndexes: boolean;
}

/**
 * Migrates a build schema and, once, makes it cheap to write: tables unlogged and secondary
 * indexes dropped, their definitions recorded in the build row in the same transaction, so a
 * crash at any point leaves either the prepared schema with its recorded indexes or neither.
 * Primary keys and unique indexes stay: the projector's upserts and duplicate checks need them.
 * The build row must exist (recordBuild) first.
 */
export async function prepareBuildSchema(pool: Pool, o: PrepareOptions): Promise<void> {
  const live = await liveRecord(pool, o.viewsSchema);
  const readers = withRoles(o.readerRole, await viewReaders(pool, o.viewsSchema));
  const writers = withRoles(o.writerRole, live ? await schemaWriters(pool, live.schema) : []);
  // One migrate applies the migrations; each further one (nothing left to apply) grants a pair.
  for (let i = 0; i < Math.max(1, readers.length, writers.length); i++) {
    const writerRole = writers[i];
    await migrate(pool, o.schema, readers[i], writerRole ? { writerRole } : {});
  }
  const build = await getBuild(pool, o.viewsSchema, o.schema);
  if (!build) throw new Error(`no build recorded for schema ${o.schema}`);
  if (build.prepared) return;
  const client = await pool.connect();
  try {
    await client.query('begin');
    // pg_get_indexdef qualifies names that are not on the search_path: keep it empty.
    await client.query('set local search_path to pg_catalog');
    const deferred: DeferredIndex[] = [];
    if (o.deferIndexes) {
      const { rows } = await client.query<DeferredIndex>(
        `select i.relname as name, pg_get_indexdef(x.indexrelid) as def
         from pg_index x
         join pg_class i on i.oid = x.indexrelid
         join pg_class t on t.oid = x.indrelid
         join pg_namespace n on n.oid = t.relnamespace
         where n.nspname = $1 and not x.indisprimary and not x.indisunique
           and not exists (select 1 from pg_constraint c where c.conindid = x.indexrelid)
         order by i.relname`,
        [o.schema],
      );
      for (const r of rows) {
        await client.query(`drop index ${ident(o.schema)}.${ident(r.name)}`);
        deferred.push(r);
      }
    }
    if (o.unlogged) {
      for (const t of await schemaTables(client, o.schema)) {
        // Only projection data: bookkeeping and the webhooks' operator state (endpoints with their
        // secrets, cursors) are not rebuilt and must survive a crash mid-build.
        if (t === 'schema_migrations' || t.startsWith('webhook_')) continue;
        await client.query(`alter table ${ident(o.schema)}.${ident(t)} set unlogged`);
      }
    }
    await client.query(
      `update ${ident(o.viewsSchema)}.vy_builds
       set prepared = true, unlogged = $2, deferred_indexes = deferred_indexes || $3::jsonb where schema = $1`,
      [o.schema, o.unlogged, JSON.stringify(deferred)],
    );
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

export interface FinalizeReport {
  indexes: string[];
  loggedTables: string[];
  seconds: number;
}

/**
 * Makes a built schema fit to serve: recreates the deferred indexes (skipping any that exist, so a
 * crash mid-way resumes), turns every unlogged table logged and analyses. The projector must not
 * be writing to the schema meanwhile (SET LOGGED rewrites each table under an exclusive lock).
 */
export async function finalizeBuildSchema(
  pool: Pool,
  viewsSchema: string,
  schema: string,
): Promise<FinalizeReport> {
  const started = performance.now();
  const build = await getBuild(pool, viewsSchema, schema);
  if (!build) throw new Error(`no build recorded for schema ${schema}`);
  const client = await pool.connect();
  const report: FinalizeReport = { indexes: [], loggedTables: [], seconds: 0 };
  try {
    await client.query(`set maintenance_work_mem = '256MB'`);
    const deferred = build.deferredIndexes as unknown as DeferredIndex[];
    for (const ix of deferred) {
      const { rows } = await client.query<{ ok: boolean }>('select to_regclass($1) is not null as ok', [
        `${ident(schema)}.${ident(ix.name)}`,
      ]);
      if (rows[0]?.ok) continue;
      await client.query(ix.def);
      report.indexes.push(ix.name);
    }
    const { rows: unlogged } = await client.query<{ name: string }>(
      `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = $1 and c.relkind = 'r' and c.relpersistence = 'u' order by c.relname`,
      [schema],
    );
    for (const t of unlogged) {
      await client.query(`alter table ${ident(schema)}.${ident(t.name)} set logged`);
      report.loggedTables.push(t.name);
    }
    for (const t of await schemaTables(client, schema))
      await client.query(`analyze ${ident(schema)}.${ident(t)}`);
    await client.query(
      `update ${ident(viewsSchema)}.vy_builds set unlogged = false, deferred_indexes = '[]'::jsonb where schema = $1`,
      [schema],
    );
  } finally {
    client.release();
  }
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

/** Drops a projection schema and everything in it. */
export async function dropProjectionSchema(db: Queryable, schema: string): Promise<void> {
  await db.query(`drop schema if exists ${ident(schema)} cascade`);
}
