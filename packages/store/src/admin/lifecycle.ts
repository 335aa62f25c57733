import { latestVersion, migrate } from '../migrations/index.js';
import { ident, type Pool } from '../pool/index.js';
import { getBuild } from './meta.js';

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
  readerRole?: string;
  /** The runtime writer role, granted DML on the build's tables (it writes there once live). */
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
  await migrate(pool, o.schema, o.readerRole, o.writerRole ? { writerRole: o.writerRole } : {});
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
