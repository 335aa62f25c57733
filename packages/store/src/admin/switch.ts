import { grantWrite } from '../migrations/index.js';
import { ident, type Pool } from '../pool/index.js';
import { createListener, type Listener } from '../pool/listen.js';
import { revokeWebhookSecrets } from '../webhooks/index.js';
import {
  schemaExists,
  schemaTables,
  schemaVersion,
  schemaWriters,
  viewReaders,
  withRoles,
} from './lifecycle.js';
import { ADMIN_TABLES, ensureAdminTables, liveRecord } from './meta.js';

/**
 * The channel `switchLive` notifies after a switch (payload: the views schema), so projectors that
 * follow the live schema (`FOLLOW_LIVE`) move at once rather than at their next look.
 */
export const LIVE_CHANNEL = 'vault_yield_live';

export interface SwitchOptions {
  /** Schema of the views the reader reads (its search_path). */
  viewsSchema: string;
  /** Physical projection schema to serve from now on. */
  target: string;
  /**
   * Read-only role: usage + select on the views, and on the target's tables. Granted besides the
   * roles that read the views before the switch (viewReaders), which get the same whether or not
   * this is set: a switch never leaves a reader of the views unable to read them.
   */
  readerRole?: string;
  /**
   * Runtime writer role (DML only, apart from the migrator that switches): may read which schema
   * is live and its build (vy_live, vy_builds), so projectors that follow it (FOLLOW_LIVE) and the
   * webhooks deliverer find it, and gets DML on the target's tables (where a follower writes next).
   * No view. The roles that write the previous live schema (schemaWriters) get the same.
   */
  writerRole?: string;
  /** Allow a target that still has unlogged tables (a crash would empty them). Default false. */
  allowUnlogged?: boolean;
}

export interface SwitchResult {
  previous: string | null;
  target: string;
  views: string[];
  /** The roles granted the views and the target's tables (the views' readers and readerRole). */
  readers: string[];
  /** The roles granted the bookkeeping and DML on the target (the previous live schema's writers and writerRole). */
  writers: string[];
}

/**
 * Tables of a physical schema that get a view: everything but the indexer's own bookkeeping and
 * the webhooks' (endpoints hold signing secrets; the API serves none of it).
 */
export const viewedTable = (table: string): boolean =>
  !table.startsWith('indexer_') && !table.startsWith('webhook_');

/**
 * Points the views schema at `target`, atomically: every view is dropped and recreated as
 * `select * from target.table` inside one transaction, with the live record and the builds'
 * states. A reader's statement sees the old views or the new ones, never a mix: statements that
 * reach a view while the switch holds its lock wait for the commit and then resolve the name again
 * (Postgres re-looks-up a relation whose lock it waited for), landing on the new view.
 */
export async function switchLive(pool: Pool, o: SwitchOptions): Promise<SwitchResult> {
  const v = ident(o.viewsSchema);
  const t = ident(o.target);
  if (o.viewsSchema === o.target) throw new Error('the views schema cannot be its own target');
  await ensureAdminTables(pool, o.viewsSchema);
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('select pg_advisory_xact_lock(hashtext($1))', [`vault-yield-switch:${o.viewsSchema}`]);
    const version = await schemaVersion(client, o.target);
    if (!version.current) {
      throw new Error(
        `schema ${o.target} is at migration ${version.applied}: migrate it before switching to it`,
      );
    }
    if (!o.allowUnlogged) {
      const { rows } = await client.query<{ n: number }>(
        `select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = $1 and c.relkind = 'r' and c.relpersistence = 'u'`,
        [o.target],
      );
      if ((rows[0]?.n ?? 0) > 0)
        throw new Error(`schema ${o.target} has unlogged tables: finalize the build first`);
    }
    const tables = (await schemaTables(client, o.target)).filter(viewedTable);
    const { rows: existing } = await client.query<{ name: string }>(
      `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = $1 and c.relkind = 'v'`,
      [o.viewsSchema],
    );
    for (const e of existing) {
      if (!tables.includes(e.name)) await client.query(`drop view ${v}.${ident(e.name)}`);
    }
    const prev = await client.query<{ schema: string }>(`select schema from ${v}.vy_live where id`);
    const previous = prev.rows[0]?.schema ?? null;
    // Who reads the views and who writes the live schema, read before the views are dropped (their
    // grants go with them): each keeps its access on the new views and target.
    const readers = withRoles(o.readerRole, await viewReaders(client, o.viewsSchema));
    const writers = withRoles(o.writerRole, previous ? await schemaWriters(client, previous) : []);
    const readerList = readers.map(ident).join(', ');
    if (readers.length) await client.query(`grant usage on schema ${v} to ${readerList}`);
    for (const table of tables) {
      if (ADMIN_TABLES.includes(table))
        throw new Error(`table name ${table} is reserved in the views schema`);
      // Drop + create rather than CREATE OR REPLACE: the new schema may have columns in another order.
      await client.query(`drop view if exists ${v}.${ident(table)}`);
      await client.query(`create view ${v}.${ident(table)} as select * from ${t}.${ident(table)}`);
      if (readers.length) await client.query(`grant select on ${v}.${ident(table)} to ${readerList}`);
    }
    for (const reader of readers) {
      // Not needed through the views (they run with their owner's rights), but lets the read-only
      // role inspect the physical schema and keeps security_invoker views an option.
      await client.query(`grant usage on schema ${t} to ${ident(reader)}`);
      await client.query(`grant select on all tables in schema ${t} to ${ident(reader)}`);
      await revokeWebhookSecrets(client, o.target, reader);
    }
    for (const writer of writers) {
      const w = ident(writer);
      await client.query(`grant usage on schema ${v} to ${w}`);
      await client.query(`grant select on ${v}.vy_live, ${v}.vy_builds to ${w}`);
      await grantWrite(client, o.target, writer);
    }
    await client.query(
      `insert into ${v}.vy_live (id, schema, previous, switched_at) values (true, $1, $2, now())
       on conflict (id) do update set schema = excluded.schema, previous = excluded.previous, switched_at = now()`,
      [o.target, previous],
    );
    if (previous && previous !== o.target) {
      await client.query(
        `insert into ${v}.vy_builds (schema, purpose, group_id, topic, state, prepared, retired_at)
         values ($1, 'initial', '', '', 'retired', true, now())
         on conflict (schema) do update set state = 'retired', retired_at = now()`,
        [previous],
      );
    }
    await client.query(
      `insert into ${v}.vy_builds (schema, purpose, group_id, topic, state, prepared, switched_at)
       values ($1, 'initial', '', '', 'live', true, now())
       on conflict (schema) do update set state = 'live', switched_at = now(), retired_at = null,
         caught_up_at = coalesce(${v}.vy_builds.caught_up_at, now())`,
      [o.target],
    );
    // Delivered at the commit, to every follower of this views schema (see LIVE_CHANNEL).
    await client.query('select pg_notify($1, $2)', [LIVE_CHANNEL, o.viewsSchema]);
    await client.query('commit');
    return { previous, target: o.target, views: tables, readers, writers };
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

export interface LiveSwitchWatch {
  /** Stops the interval and the LISTEN connection. */
  stop(): Promise<void>;
}

/**
 * Calls `check` whenever `viewsSchema` may have been switched: at each switch's notification
 * (LISTEN LIVE_CHANNEL on a connection of its own, `url`), once LISTEN is in force (a notification
 * sent meanwhile is lost), and every `intervalMs` should one be missed. Through a transaction-mode
 * pooler (`listen: false`: LISTEN needs a session) the interval alone tells. What the followers
 * of the live schema (projector, indexer) share; `check` decides whether anything moved.
 */
export function watchLiveSwitch(o: {
  url: string;
  viewsSchema: string;
  intervalMs: number;
  listen: boolean;
  check: () => void;
  /** The LISTEN connection was lost; it is made again after `retryInMs` (polling meanwhile). */
  onListenError: (err: unknown, retryInMs: number) => void;
}): LiveSwitchWatch {
  const timer = setInterval(o.check, o.intervalMs);
  timer.unref();
  const listener: Listener | null = o.listen
    ? createListener({
        url: o.url,
        applicationName: 'vault-yield-follow',
        channel: LIVE_CHANNEL,
        onNotify: (payload) => {
          if (payload === o.viewsSchema) o.check();
        },
        onListening: o.check,
        onError: o.onListenError,
      })
    : null;
  return {
    async stop() {
      clearInterval(timer);
      await listener?.close();
    },
  };
}

/**
 * The physical schema the views schema points at (null when it was never switched). Falls back
 * to the views' own dependency when the bookkeeping row is missing.
 */
export async function liveSchema(pool: Pick<Pool, 'query'>, viewsSchema: string): Promise<string | null> {
  const rec = await liveRecord(pool, viewsSchema);
  if (rec) return rec.schema;
  const { rows } = await pool.query<{ schema: string }>(
    `select distinct table_schema as schema from information_schema.view_table_usage
     where view_schema = $1 limit 1`,
    [viewsSchema],
  );
  return rows[0]?.schema ?? null;
}

/**
 * Why `schema` cannot be the live schema of `viewsSchema` (null when it can): it no longer exists,
 * or (`viewed`) the views schema has no view standing on it any more — e.g. the views were dropped
 * with the schema they pointed at, and `vy_live` still names it.
 */
export async function liveSchemaProblem(
  db: Pick<Pool, 'query'>,
  viewsSchema: string,
  schema: string,
  viewed = true,
): Promise<string | null> {
  if (!(await schemaExists(db, schema))) return `schema ${schema} no longer exists`;
  if (!viewed) return null;
  const { rows } = await db.query<{ n: number }>(
    `select count(*)::int as n
       from pg_depend d
       join pg_rewrite r on r.oid = d.objid
       join pg_class v on v.oid = r.ev_class and v.relkind = 'v'
       join pg_namespace vn on vn.oid = v.relnamespace
       join pg_class t on t.oid = d.refobjid
       join pg_namespace tn on tn.oid = t.relnamespace
      where d.classid = 'pg_rewrite'::regclass and vn.nspname = $1 and tn.nspname = $2`,
    [viewsSchema, schema],
  );
  return (rows[0]?.n ?? 0) > 0 ? null : `no view of ${viewsSchema} stands on ${schema}`;
}
