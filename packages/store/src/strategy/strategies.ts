import { createHash } from 'node:crypto';
import type { StrategyCatalogue } from '@vault-yield/domain';
import type { PoolClient } from '../pool/index.js';
import type { ApplyOutcome } from './screen.js';

/**
 * Replaces the strategy catalogue if `catalogue` is newer than the one in place (by publishedAt,
 * then by content digest); pairs come from the newest screen, figures are kept.
 */
export async function applyCatalogue(
  client: PoolClient,
  catalogue: StrategyCatalogue,
  now = Date.now(),
): Promise<ApplyOutcome> {
  const digest = createHash('sha256').update(JSON.stringify(catalogue)).digest('hex');
  await client.query('savepoint market_apply');
  try {
    await client.query(`select pg_advisory_xact_lock(hashtext('vault-yield-screen'))`);
    const { rows } = await client.query<{ published_at: number; digest: string }>(
      'select published_at, digest from catalogue_meta where id',
    );
    const current = rows[0];
    if (current) {
      const order =
        catalogue.publishedAt !== current.published_at
          ? catalogue.publishedAt - current.published_at
          : digest.localeCompare(current.digest);
      if (order <= 0) {
        await client.query('release savepoint market_apply');
        return order === 0 ? 'duplicate' : 'older';
      }
    }
    const entries = catalogue.strategies.map((s, i) => ({
      id: s.id,
      name: s.name,
      description: s.description,
      risk_note: s.riskNote,
      display_order: i,
    }));
    await client.query('delete from strategies where not (id = any($1::text[]))', [entries.map((e) => e.id)]);
    await client.query(
      `insert into strategies (id, name, description, risk_note, display_order, pairs, screen_version, updated_at)
       select x.id, x.name, x.description, x.risk_note, x.display_order,
              coalesce(m.strategy_pairs -> x.id, '[]'::jsonb), m.version, $2
       from jsonb_to_recordset($1::jsonb) as x(id text, name text, description text, risk_note text, display_order int)
       left join screen_meta m on m.id
       on conflict (id) do update set name = excluded.name, description = excluded.description,
         risk_note = excluded.risk_note, display_order = excluded.display_order,
         pairs = excluded.pairs, screen_version = excluded.screen_version, updated_at = excluded.updated_at`,
      [JSON.stringify(entries), now],
    );
    await client.query(
      `insert into catalogue_meta (id, published_at, digest, updated_at) values (true, $1, $2, $3)
       on conflict (id) do update set published_at = excluded.published_at, digest = excluded.digest, updated_at = excluded.updated_at`,
      [catalogue.publishedAt, digest, now],
    );
    await client.query('release savepoint market_apply');
    return 'applied';
  } catch (err) {
    await client.query('rollback to savepoint market_apply').catch(() => {});
    throw err;
  }
}
