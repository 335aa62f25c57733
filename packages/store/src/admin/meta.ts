import { ident, type Pool } from '../pool/index.js';

/**
 * Bookkeeping of projection schemas, kept in the views schema beside the views (the reader role
 * gets no grant on these tables): which physical schema is live, and every build's progress.
 */
export type BuildPurpose = 'rebuild' | 'verify' | 'reindex' | 'initial';
/**
 * building → ready (indexes built, tables logged, caught up) → live → retired (switched away)
 * → dropped. `failed` marks a build abandoned by hand.
 */
export type BuildState = 'building' | 'ready' | 'live' | 'retired' | 'dropped' | 'failed';

export interface BuildRecord {
  schema: string;
  purpose: BuildPurpose;
  groupId: string;
  topic: string;
  /**
   * Strategy topics folded into the schema too (screen results, strategy catalogue), if any
   * (`market`: the column's name, kept; see the README's glossary).
   */
  market: { screenTopic: string; catalogueTopic: string } | null;
  /**
   * A reindex's checkpoint namespace: the schema of the indexer checkpoint that cut `topic` (null
   * for other builds). An indexer following the live log (`FOLLOW_LIVE`) resumes from it.
   */
  indexerSchema: string | null;
  state: BuildState;
  /** True once the schema was migrated, made unlogged and stripped of its secondary indexes. */
  prepared: boolean;
  unlogged: boolean;
  /** `CREATE INDEX` statements of the secondary indexes dropped while building. */
  deferredIndexes: string[];
  startedAt: Date;
  caughtUpAt: Date | null;
  switchedAt: Date | null;
  retiredAt: Date | null;
  droppedAt: Date | null;
}

export interface LiveRecord {
  schema: string;
  previous: string | null;
  switchedAt: Date;
}

const BUILDS = 'vy_builds';
const LIVE = 'vy_live';
/** A function of the views schema: the live log (see `liveLog`). */
const LIVE_LOG = 'vy_live_log';
/** Tables of the views schema that are bookkeeping, not views of the projection. */
export const ADMIN_TABLES: readonly string[] = [BUILDS, LIVE];

type Queryable = Pick<Pool, 'query'>;

/** Creates the views schema and its bookkeeping tables if missing (idempotent). */
export async function ensureAdminTables(pool: Pool, viewsSchema: string): Promise<void> {
  const v = ident(viewsSchema);
  const db = await pool.connect();
  try {
    await db.query('begin');
    // Concurrent `create … if not exists` can still collide: serialise them.
    await db.query(`select pg_advisory_xact_lock(hashtext($1))`, [`vault-yield-admin:${viewsSchema}`]);
    await db.query(`create schema if not exists ${v}`);
    await db.query(
      `create table if not exists ${v}.${BUILDS} (
        schema           text primary key,
        purpose          text not null,
        group_id         text not null,
        topic            text not null,
        market           jsonb,
        state            text not null,
        prepared         boolean not null default false,
        unlogged         boolean not null default false,
        deferred_indexes jsonb not null default '[]'::jsonb,
        started_at       timestamptz not null default now(),
        caught_up_at     timestamptz,
        switched_at      timestamptz,
        retired_at       timestamptz,
        dropped_at       timestamptz
      )`,
    );
    // Added later: views schemas made before it get the column here (ALTER needs the owner, so
    // only when it is missing).
    const { rowCount } = await db.query(
      `select 1 from information_schema.columns
        where table_schema = $1 and table_name = $2 and column_name = 'indexer_schema'`,
      [viewsSchema, BUILDS],
    );
    if (!rowCount) await db.query(`alter table ${v}.${BUILDS} add column if not exists indexer_schema text`);
    await db.query(
      `create table if not exists ${v}.${LIVE} (
        id           boolean primary key default true check (id),
        schema       text not null,
        previous     text,
        switched_at  timestamptz not null default now()
      )`,
    );
    // The live log for roles that may not read the bookkeeping (the reader's freshness).
    const fn = await db.query<{ ok: boolean }>(`select to_regprocedure($1) is not null as ok`, [
      `${v}.${LIVE_LOG}()`,
    ]);
    if (!fn.rows[0]?.ok) await db.query(liveLogFunction(v));
    await db.query('commit');
  } catch (err) {
    await db.query('rollback').catch(() => {});
    throw err;
  } finally {
    db.release();
  }
}

interface BuildDbRow {
  schema: string;
  purpose: BuildPurpose;
  group_id: string;
  topic: string;
  market: BuildRecord['market'];
  indexer_schema: string | null;
  state: BuildState;
  prepared: boolean;
  unlogged: boolean;
  deferred_indexes: string[];
  started_at: Date;
  caught_up_at: Date | null;
  switched_at: Date | null;
  retired_at: Date | null;
  dropped_at: Date | null;
}

const toBuild = (r: BuildDbRow): BuildRecord => ({
  schema: r.schema,
  purpose: r.purpose,
  groupId: r.group_id,
  topic: r.topic,
  market: r.market ?? null,
  indexerSchema: r.indexer_schema ?? null,
  state: r.state,
  prepared: r.prepared,
  unlogged: r.unlogged,
  deferredIndexes: r.deferred_indexes,
  startedAt: r.started_at,
  caughtUpAt: r.caught_up_at,
  switchedAt: r.switched_at,
  retiredAt: r.retired_at,
  droppedAt: r.dropped_at,
});

async function adminTablesExist(db: Queryable, viewsSchema: string): Promise<boolean> {
  const { rows } = await db.query<{ ok: boolean }>(`select to_regclass($1) is not null as ok`, [
    `${ident(viewsSchema)}.${BUILDS}`,
  ]);
  return rows[0]?.ok ?? false;
}

export async function listBuilds(db: Queryable, viewsSchema: string): Promise<BuildRecord[]> {
  if (!(await adminTablesExist(db, viewsSchema))) return [];
  const { rows } = await db.query<BuildDbRow>(
    `select * from ${ident(viewsSchema)}.${BUILDS} order by started_at, schema`,
  );
  return rows.map(toBuild);
}

export async function getBuild(
  db: Queryable,
  viewsSchema: string,
  schema: string,
): Promise<BuildRecord | null> {
  if (!(await adminTablesExist(db, viewsSchema))) return null;
  const { rows } = await db.query<BuildDbRow>(
    `select * from ${ident(viewsSchema)}.${BUILDS} where schema = $1`,
    [schema],
  );
  return rows[0] ? toBuild(rows[0]) : null;
}

export interface NewBuild {
  schema: string;
  purpose: BuildPurpose;
  groupId: string;
  topic: string;
  market: BuildRecord['market'];
  /** A reindex's checkpoint namespace (BuildRecord.indexerSchema). */
  indexerSchema?: string | null;
  state?: BuildState;
}

/**
 * Records a build (state `building` unless given); an existing row for the schema is kept as is,
 * but for its indexer schema, set when given (a reindex resuming a build recorded before the
 * column existed).
 */
export async function recordBuild(db: Pool, viewsSchema: string, b: NewBuild): Promise<BuildRecord> {
  await ensureAdminTables(db, viewsSchema);
  const t = `${ident(viewsSchema)}.${BUILDS}`;
  await db.query(
    `insert into ${t} (schema, purpose, group_id, topic, market, state, indexer_schema)
     values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (schema) do update set indexer_schema = coalesce(excluded.indexer_schema, ${BUILDS}.indexer_schema)`,
    [
      b.schema,
      b.purpose,
      b.groupId,
      b.topic,
      b.market ? JSON.stringify(b.market) : null,
      b.state ?? 'building',
      b.indexerSchema ?? null,
    ],
  );
  return (await getBuild(db, viewsSchema, b.schema)) as BuildRecord;
}

export interface BuildPatch {
  state?: BuildState;
  caughtUp?: boolean;
  switched?: boolean;
  retired?: boolean;
  dropped?: boolean;
}

/** Moves a build's state; timestamps are set to now() the first time their event happens. */
export async function markBuild(
  db: Queryable,
  viewsSchema: string,
  schema: string,
  p: BuildPatch,
): Promise<void> {
  await db.query(
    `update ${ident(viewsSchema)}.${BUILDS} set
       state = coalesce($2, state),
       caught_up_at = case when $3 then coalesce(caught_up_at, now()) else caught_up_at end,
       switched_at = case when $4 then now() else switched_at end,
       retired_at = case when $5 then now() else retired_at end,
       dropped_at = case when $6 then now() else dropped_at end
     where schema = $1`,
    [schema, p.state ?? null, !!p.caughtUp, !!p.switched, !!p.retired, !!p.dropped],
  );
}

/** The live record, or null when nothing was ever switched in this views schema. */
export async function liveRecord(db: Queryable, viewsSchema: string): Promise<LiveRecord | null> {
  if (!(await adminTablesExist(db, viewsSchema))) return null;
  const { rows } = await db.query<{ schema: string; previous: string | null; switched_at: Date }>(
    `select schema, previous, switched_at from ${ident(viewsSchema)}.${LIVE} where id`,
  );
  const r = rows[0];
  return r ? { schema: r.schema, previous: r.previous, switchedAt: r.switched_at } : null;
}

/** The log the live projection folds, and the indexer checkpoint that writes it. */
export interface LiveLog {
  /** The live projection schema. */
  schema: string;
  /** Its build's vault topic; null for a schema never built (switched to as it was). */
  topic: string | null;
  /**
   * The checkpoint namespace of the reindex that cut `topic` (the live build's, else the last
   * reindex of that topic that was live); null when no reindex wrote `topic`.
   */
  indexerSchema: string | null;
}

/**
 * `vy_live_log()`: the live log, readable by any role with usage on the views schema (security
 * definer, owned by the migrator): the reader's `/ready` follows a reindex without a grant on the
 * bookkeeping. It names topics and schemas only.
 */
const liveLogFunction = (v: string) => `
  create function ${v}.${LIVE_LOG}() returns table (schema text, topic text, indexer_schema text)
  language sql stable security definer set search_path = pg_catalog as $$
    select l.schema, b.topic,
           coalesce(b.indexer_schema, (
             select r.indexer_schema from ${v}.${BUILDS} r
              where r.topic = b.topic and r.purpose = 'reindex' and r.indexer_schema is not null
                and r.switched_at is not null
              order by r.switched_at desc limit 1))
      from ${v}.${LIVE} l
      left join ${v}.${BUILDS} b on b.schema = l.schema and b.purpose <> 'initial' and b.topic <> ''
     where l.id
  $$`;

/**
 * The live log of a views schema, or null when nothing was switched there (or its bookkeeping
 * predates `vy_live_log`). Any role with usage on the views schema may call it.
 */
export async function liveLog(db: Queryable, viewsSchema: string): Promise<LiveLog | null> {
  const v = ident(viewsSchema);
  const { rows: fn } = await db.query<{ ok: boolean }>(`select to_regprocedure($1) is not null as ok`, [
    `${v}.${LIVE_LOG}()`,
  ]);
  if (!fn[0]?.ok) return null;
  const { rows } = await db.query<{ schema: string; topic: string | null; indexer_schema: string | null }>(
    `select schema, topic, indexer_schema from ${v}.${LIVE_LOG}()`,
  );
  const r = rows[0];
  return r ? { schema: r.schema, topic: r.topic, indexerSchema: r.indexer_schema } : null;
}
