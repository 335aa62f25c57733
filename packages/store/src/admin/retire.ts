import type { Pool } from '../pool/index.js';
import { dropProjectionSchema, schemaExists } from './lifecycle.js';
import { listBuilds, liveRecord, markBuild } from './meta.js';
import { indexerCheckpoints, lastProjectionWrite } from './status.js';

export interface RetireOptions {
  viewsSchema: string;
  /** A schema is dropped only this long after it stopped being live (and after its last write). */
  graceMs: number;
  dryRun?: boolean;
  now?: Date;
}

export interface RetireDecision {
  schema: string;
  action: 'dropped' | 'would-drop' | 'kept';
  reason: string;
}

/**
 * Drops projection schemas that are no longer live: retired builds past the grace period, and
 * verify scratch schemas left behind. Never drops the live schema, a schema holding indexer
 * state, one a projector wrote to within the grace period (the old projector still running), or
 * the schema that was live before any rebuild (`initial`: it may be shared with the indexer).
 */
export async function retireSchemas(pool: Pool, o: RetireOptions): Promise<RetireDecision[]> {
  const now = (o.now ?? new Date()).getTime();
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
    if (b.purpose === 'initial') {
      keep('schema predates the rebuilds (it may hold the indexer checkpoint): drop it by hand');
      continue;
    }
    if (now - since.getTime() < o.graceMs) {
      keep(`within the grace period (until ${new Date(since.getTime() + o.graceMs).toISOString()})`);
      continue;
    }
    if (!(await schemaExists(pool, b.schema))) {
      if (!o.dryRun) await markBuild(pool, o.viewsSchema, b.schema, { state: 'dropped', dropped: true });
      out.push({
        schema: b.schema,
        action: o.dryRun ? 'would-drop' : 'dropped',
        reason: 'schema already gone',
      });
      continue;
    }
    if ((await indexerCheckpoints(pool, b.schema)).length > 0) {
      keep('holds an indexer checkpoint');
      continue;
    }
    const lastWrite = await lastProjectionWrite(pool, b.schema);
    if (lastWrite && now - lastWrite.getTime() < o.graceMs) {
      keep(`a projector wrote to it at ${lastWrite.toISOString()} (still running?)`);
      continue;
    }
    if (o.dryRun) {
      out.push({ schema: b.schema, action: 'would-drop', reason: `${b.state} since ${since.toISOString()}` });
      continue;
    }
    await dropProjectionSchema(pool, b.schema);
    await markBuild(pool, o.viewsSchema, b.schema, { state: 'dropped', dropped: true });
    out.push({ schema: b.schema, action: 'dropped', reason: `${b.state} since ${since.toISOString()}` });
  }
  return out;
}
