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
    await db.query(
      `create table if not exists ${v}.${LIVE} (
        id           boolean primary key default true check (id),
        schema       text not null,
        previous     text,
        switched_at  timestamptz not null default now()
      )`,
    );
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
  state?: BuildState;
}

/** Records a build (state `building` unless given); an existing row for the schema is kept as is. */
export async function recordBuild(db: Pool, viewsSchema: string, b: NewBuild): Promise<BuildRecord> {
  await ensureAdminTables(db, viewsSchema);
  await db.query(
    `insert into ${ident(viewsSchema)}.${BUILDS} (schema, purpose, group_id, topic, market, state)
     values ($1, $2, $3, $4, $5, $6) on conflict (schema) do nothing`,
    [
      b.schema,
      b.purpose,
      b.groupId,
      b.topic,
      b.market ? JSON.stringify(b.market) : null,
      b.state ?? 'building',
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
