import type { PoolClient } from '../pool/index.js';

/**
 * The deliverer's lock: a session's advisory lock, one per webhooks schema, so that one deliverer
 * sends at a time (another waits as a standby). It is held by the session that took it: the
 * deliverer keeps that session (a connection straight to Postgres) for as long as it sends.
 */

/** The lock's name: one deliverer per webhooks schema. */
const lockKey = (schema: string) => `vault-yield-webhooks:${schema}`;

/** Takes the deliverer lock of `schema` on `client`'s session if free; false when another holds it. */
export async function tryWebhookLock(client: PoolClient, schema: string): Promise<boolean> {
  const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtext($1)) as ok', [
    lockKey(schema),
  ]);
  return rows[0]?.ok === true;
}

/** Whether `client`'s session still holds an advisory lock (rejects when the session does not answer). */
export async function holdsWebhookLock(client: PoolClient): Promise<boolean> {
  const r = await client.query<{ held: boolean }>(
    `select exists (select 1 from pg_locks where locktype = 'advisory' and pid = pg_backend_pid() and granted) as held`,
  );
  return r.rows[0]?.held === true;
}

/** Lets every advisory lock of `client`'s session go (rejects when the session does not answer). */
export async function releaseWebhookLock(client: PoolClient): Promise<void> {
  await client.query('select pg_advisory_unlock_all()');
}
