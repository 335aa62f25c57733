import { ident, type Pool } from '../pool/index.js';
import { schemaExists } from './lifecycle.js';
import { listBuilds, liveRecord, markBuild } from './meta.js';
import { indexerCheckpoints } from './status.js';

type Queryable = Pick<Pool, 'query'>;

/** A schema a projector wrote to less than this long ago is never dropped (whatever the grace). */
export const DEFAULT_QUIET_MS = 60_000;
/** How long the drop may wait for a table lock before it gives up and leaves the schema. */
export const DEFAULT_DROP_LOCK_TIMEOUT_MS = 5_000;

export interface RetireOptions {
  viewsSchema: string;
  /** A schema is dropped only this long after it stopped being live (and after its last write). */
  graceMs: number;
  /**
   * Independent of the grace: a schema whose stored offsets moved less than this long ago (on the
   * database's clock) is left in place, since a projector may still be writing to it (default
   * DEFAULT_QUIET_MS).
   */
  quietMs?: number;
  /** Lock wait allowed to the drop; past it the schema is reported busy and left (default 5 s). */
  lockTimeoutMs?: number;
  dryRun?: boolean;
  /** Clock of the grace period (tests); the quiet period is measured on the database's clock. */
  now?: Date;
}

export interface RetireDecision {
  schema: string;
  action: 'dropped' | 'would-drop' | 'kept';
  reason: string;
}

/** A session other than ours holding (or waiting for) a lock on the schema or one of its tables. */
export interface SchemaLocker {
  pid: number;
  application: string | null;
  mode: string;
}

export interface SchemaActivity {
  /** Latest write the projectors committed (max consumer_offsets.updated_at), null when none. */
  lastWrite: Date | null;
  /** now() − lastWrite on the database's clock (the writers' clock), null when never written. */
  lastWriteAgoMs: number | null;
  /** Open transactions using the schema now (a projector mid-batch, a verify, …). */
  lockers: SchemaLocker[];
}

/**
 * What is writing to a schema: its last committed projector write, and the sessions holding locks
 * on it now. The projector updates consumer_offsets.updated_at in every batch transaction, and
 * its upsert locks the offsets row first thing in the transaction.
 */
export async function schemaActivity(db: Queryable, schema: string): Promise<SchemaActivity> {
  const { rows: offsets } = await db.query<{ ok: boolean }>('select to_regclass($1) is not null as ok', [
    `${ident(schema)}.consumer_offsets`,
  ]);
  let lastWrite: Date | null = null;
  let lastWriteAgoMs: number | null = null;
  if (offsets[0]?.ok) {
    const { rows } = await db.query<{ at: Date | null; ago: number | null }>(
      `select max(updated_at) as at,
              (extract(epoch from (now() - max(updated_at))) * 1000)::float8 as ago
       from ${ident(schema)}.consumer_offsets`,
    );
    lastWrite = rows[0]?.at ?? null;
    lastWriteAgoMs = rows[0]?.ago == null ? null : Math.max(0, Math.round(rows[0].ago));
  }
  // Relation locks on its tables, and object locks on the schema itself (a session creating in
  // it). Autovacuum is left out: it yields to the drop's lock on its own.
  const { rows: lockers } = await db.query<{ pid: number; application: string | null; mode: string }>(
    `select l.pid, max(a.application_name) as application, string_agg(distinct l.mode, ',') as mode
     from pg_locks l
     join pg_namespace n on n.nspname = $1
     left join pg_class c on l.locktype = 'relation' and c.oid = l.relation
     left join pg_stat_activity a on a.pid = l.pid
     where l.pid <> pg_backend_pid()
       and l.database = (select oid from pg_database where datname = current_database())
       and (c.relnamespace = n.oid
            or (l.locktype = 'object' and l.classid = 'pg_namespace'::regclass and l.objid = n.oid))
       and a.backend_type is distinct from 'autovacuum worker'
     group by l.pid
     order by l.pid`,
    [schema],
  );
  return {
    lastWrite,
    lastWriteAgoMs,
    lockers: lockers.map((r) => ({ pid: r.pid, application: r.application || null, mode: r.mode })),
  };
}

export type DropOutcome =
  | { dropped: true }
  /** A lock wait passed the lock timeout: a transaction is using the schema. */
  | { dropped: false; busy: true }
  /** Written within the quiet period, seen once no projector could write any more. */
  | { dropped: false; busy: false; lastWrite: Date; lastWriteAgoMs: number };

/**
 * Drops a projection schema and marks its build dropped, in one transaction whose lock waits are
 * bounded by `lockTimeoutMs`: a transaction still using the schema (a projector mid-batch) makes
 * it give up rather than queue every other session behind it. With `quietMs`, the offsets table
 * is locked first (no projector batch can commit past that) and the last write checked again, so
 * a projector that wrote between the caller's look and the drop keeps its schema. When it gives
 * up, the schema is left as it was.
 */
export async function dropSchemaUnlessBusy(
  pool: Pool,
  o: { schema: string; viewsSchema?: string; lockTimeoutMs?: number; quietMs?: number },
): Promise<DropOutcome> {
  const client = await pool.connect();
  let failed = false;
  try {
    await client.query('begin');
    await client.query(`select set_config('lock_timeout', $1, true)`, [
      `${Math.max(1, Math.round(o.lockTimeoutMs ?? DEFAULT_DROP_LOCK_TIMEOUT_MS))}ms`,
    ]);
    if (o.quietMs !== undefined) {
      const offsets = `${ident(o.schema)}.consumer_offsets`;
      const { rows: has } = await client.query<{ ok: boolean }>('select to_regclass($1) is not null as ok', [
        offsets,
      ]);
      if (has[0]?.ok) {
        await client.query(`lock table ${offsets} in access exclusive mode`);
        const { rows } = await client.query<{ at: Date | null; ago: number | null }>(
          `select max(updated_at) as at,
                  (extract(epoch from (clock_timestamp() - max(updated_at))) * 1000)::float8 as ago
           from ${offsets}`,
        );
        const at = rows[0]?.at ?? null;
        const ago = rows[0]?.ago == null ? null : Math.max(0, Math.round(rows[0].ago));
        if (at && ago !== null && ago < o.quietMs) {
          await client.query('rollback');
          return { dropped: false, busy: false, lastWrite: at, lastWriteAgoMs: ago };
        }
      }
    }
    await client.query(`drop schema if exists ${ident(o.schema)} cascade`);
    if (o.viewsSchema) await markBuild(client, o.viewsSchema, o.schema, { state: 'dropped', dropped: true });
    await client.query('commit');
    return { dropped: true };
  } catch (err) {
    failed = true;
    await client.query('rollback').catch(() => {});
    // lock_not_available (lock_timeout), deadlock_detected: someone is using it.
    const code = (err as { code?: string }).code;
    if (code === '55P03' || code === '40P01') return { dropped: false, busy: true };
    throw err;
  } finally {
    client.release(failed);
  }
}

/** 1500 → 1.5s, 95_000 → 1m35s, 7_380_000 → 2h3m: the units --grace / --quiet-for take. */
function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10}s`;
  const s = Math.floor(ms / 1000);
  const [d, h, m, sec] = [Math.floor(s / 86_400), Math.floor(s / 3600) % 24, Math.floor(s / 60) % 60, s % 60];
  if (d > 0) return h ? `${d}d${h}h` : `${d}d`;
  if (h > 0) return m ? `${h}h${m}m` : `${h}h`;
  return sec ? `${m}m${sec}s` : `${m}m`;
}

const describeLockers = (lockers: SchemaLocker[]) =>
  lockers
    .slice(0, 3)
    .map((l) => `pid ${l.pid}${l.application ? ` ${l.application}` : ''} ${l.mode}`)
    .join('; ') + (lockers.length > 3 ? `; ${lockers.length - 3} more` : '');

/**
 * What uses a projection schema beside its projector, each said in one phrase: the indexer
 * checkpoints it holds (the indexer resumes from them) and the webhook endpoints registered in it
 * (the deliverer's, with their delivery cursors). Empty when nothing does.
 */
export async function schemaUses(db: Queryable, schema: string): Promise<string[]> {
  const uses = (await indexerCheckpoints(db, schema)).map(
    (c) =>
      `holds the indexer checkpoint of ${c.topic ? `topic ${c.topic}` : 'a topic not recorded'} (chain ${c.chainId}, block ${c.blockNumber}, last written ${c.updatedAt.toISOString()})`,
  );
  const { rows: has } = await db.query<{ ok: boolean }>('select to_regclass($1) is not null as ok', [
    `${ident(schema)}.webhook_endpoints`,
  ]);
  if (has[0]?.ok) {
    const { rows } = await db.query<{ n: number }>(
      `select count(*)::int as n from ${ident(schema)}.webhook_endpoints`,
    );
    const n = rows[0]?.n ?? 0;
    if (n > 0) uses.push(`holds ${n} webhook endpoint${n === 1 ? '' : 's'} (their delivery cursors)`);
  }
  return uses;
}

/**
 * The schema that was live before any rebuild, when no indexer checkpoint nor webhook endpoint is
 * in it: still kept (a service may be configured with it as PROJECTION_SCHEMA), with a drop
 * advised only when no projector wrote to it within the grace and quiet periods and no
 * transaction uses it.
 */
async function unusedInitial(
  db: Queryable,
  schema: string,
  now: number,
  graceMs: number,
  quietMs: number,
): Promise<string> {
  const { lastWrite, lastWriteAgoMs: ago, lockers } = await schemaActivity(db, schema);
  const prefix = 'schema predates the rebuilds; ';
  if (lastWrite && ago !== null && (ago < quietMs || now - lastWrite.getTime() < graceMs))
    return `${prefix}in use, never dropped while used: a projector wrote to it ${formatDuration(ago)} ago (${lastWrite.toISOString()}; a projector pinned to it as PROJECTION_SCHEMA?)`;
  if (lockers.length > 0)
    return `${prefix}in use, never dropped while used: open transactions use it (${describeLockers(lockers)})`;
  const written = lastWrite ? `last written ${formatDuration(ago ?? 0)} ago` : 'never written by a projector';
  return `${prefix}nothing uses it (no indexer checkpoint, no webhook endpoint, ${written}): drop it by hand once no service has it as PROJECTION_SCHEMA, INDEXER_SCHEMA or WEBHOOKS_SCHEMA (drop schema ${schema} cascade)`;
}

/**
 * Drops projection schemas that are no longer live: retired builds past the grace period, and
 * verify scratch schemas left behind. Never drops the live schema, a schema something else uses
 * (an indexer checkpoint, webhook endpoints: schemaUses, said in the reason), the schema that was
 * live before any rebuild (`initial`: it may be a service's PROJECTION_SCHEMA; a drop by hand is
 * advised only when nothing uses it), one a projector wrote to within the grace period or, whatever the grace, within the
 * quiet period (the old projector still running after the switch), nor one an open transaction is
 * using (a projector mid-batch): the drop itself gives up after `lockTimeoutMs` of lock waiting.
 * A dry run makes the same decisions, dropping nothing.
 */
export async function retireSchemas(pool: Pool, o: RetireOptions): Promise<RetireDecision[]> {
  const now = (o.now ?? new Date()).getTime();
  const quietMs = o.quietMs ?? DEFAULT_QUIET_MS;
  const live = (await liveRecord(pool, o.viewsSchema))?.schema ?? null;
  const out: RetireDecision[] = [];
  for (const b of await listBuilds(pool, o.viewsSchema)) {
    if (b.state === 'dropped') continue;
    const keep = (reason: string) => out.push({ schema: b.schema, action: 'kept', reason });
    if (b.schema === live || b.state === 'live') {
      keep('live');
      continue;
    }
    const since = b.state === 'retired' ? b.retiredAt : b.purpose === 'verify' ? b.startedAt : null;
    if (!since) {
      keep(`state ${b.state}: not retired (resume or switch to it, or mark it failed)`);
      continue;
    }
    // What still uses it is said, and it is never dropped (nor advised dropped) while used.
    const exists = await schemaExists(pool, b.schema);
    const uses = exists ? await schemaUses(pool, b.schema) : [];
    const predates = b.purpose === 'initial' ? 'schema predates the rebuilds; ' : '';
    if (uses.length > 0) {
      keep(`${predates}in use, never dropped while used: ${uses.join('; ')}`);
      continue;
    }
    if (b.purpose === 'initial' && exists) {
      keep(await unusedInitial(pool, b.schema, now, o.graceMs, quietMs));
      continue;
    }
    if (now - since.getTime() < o.graceMs) {
      keep(`within the grace period (until ${new Date(since.getTime() + o.graceMs).toISOString()})`);
      continue;
    }
    if (!exists) {
      if (!o.dryRun) await markBuild(pool, o.viewsSchema, b.schema, { state: 'dropped', dropped: true });
      out.push({
        schema: b.schema,
        action: o.dryRun ? 'would-drop' : 'dropped',
        reason: 'schema already gone',
      });
      continue;
    }
    const activity = await schemaActivity(pool, b.schema);
    const { lastWrite, lastWriteAgoMs: ago } = activity;
    const inUse = (at: Date, agoMs: number) =>
      keep(
        `in use: last written ${formatDuration(agoMs)} ago (${at.toISOString()}), within the quiet period ` +
          `of ${formatDuration(quietMs)}: a projector may still be writing to it; left in place (stop that ` +
          'projector, then retire again)',
      );
    if (lastWrite && ago !== null && ago < quietMs) {
      inUse(lastWrite, ago);
      continue;
    }
    if (lastWrite && now - lastWrite.getTime() < o.graceMs) {
      keep(`a projector wrote to it at ${lastWrite.toISOString()} (still running?)`);
      continue;
    }
    if (activity.lockers.length > 0) {
      keep(`busy, left in place: open transactions use it (${describeLockers(activity.lockers)})`);
      continue;
    }
    const reason = `${b.state} since ${since.toISOString()}${
      lastWrite ? `, last written ${formatDuration(ago ?? 0)} ago` : ''
    }`;
    if (o.dryRun) {
      out.push({ schema: b.schema, action: 'would-drop', reason });
      continue;
    }
    const lockTimeoutMs = o.lockTimeoutMs ?? DEFAULT_DROP_LOCK_TIMEOUT_MS;
    const r = await dropSchemaUnlessBusy(pool, {
      schema: b.schema,
      viewsSchema: o.viewsSchema,
      lockTimeoutMs,
      quietMs,
    });
    if (!r.dropped) {
      if (r.busy)
        keep(
          `busy, left in place: the drop waited ${formatDuration(lockTimeoutMs)} for a lock (a transaction is using it)`,
        );
      else inUse(r.lastWrite, r.lastWriteAgoMs);
      continue;
    }
    out.push({ schema: b.schema, action: 'dropped', reason });
  }
  return out;
}
