/**
 * The callback queue's bounds (#42 item 5, migration 0026): endpoints disabled (a `410 Gone`, or
 * an operator), parked rows pruned, parked rows counted per endpoint. The queue itself (enqueue,
 * dueHeads, outcomes) is in ./index.ts.
 */
import { ident, type Pool } from '../pool/index.js';

export interface DisabledEndpoint {
  id: number;
  disabledAt: Date;
  reason: string;
}

export interface WebhookLimits {
  /**
   * Disables an endpoint: its cursor stops (no row is queued for it) and its pending rows are
   * parked with `endpoint disabled: <reason>`. False when there is no such endpoint.
   */
  disableEndpoint(id: number, reason: string): Promise<boolean>;
  /** Enables it again: its cursor resumes where it stopped. False when there is no such endpoint. */
  enableEndpoint(id: number): Promise<boolean>;
  /** The disabled endpoints. */
  disabledEndpoints(): Promise<DisabledEndpoint[]>;
  /** Deletes parked rows parked before `before` (at most `limit`); returns how many. */
  pruneParked(before: Date, limit?: number): Promise<number>;
  /** Parked rows per endpoint (endpoints with none left out). */
  parkedByEndpoint(): Promise<Map<number, number>>;
  /**
   * Parks the pending rows of `endpointIds` whose retry period is over (deadline passed), at most
   * `limit`, without another attempt: what the deliverer does for endpoints its breaker paused,
   * whose rows would otherwise wait for one probe each. Returns how many.
   */
  expirePending(endpointIds: readonly number[], limit?: number): Promise<number>;
}

export function createWebhookLimits(pool: Pool, schema: string): WebhookLimits {
  const s = ident(schema);
  const endpoints = `${s}.webhook_endpoints`;
  const deliveries = `${s}.webhook_deliveries`;
  return {
    async disableEndpoint(id, reason) {
      const { rows } = await pool.query<{ n: number }>(
        `with e as (update ${endpoints} set disabled_at = coalesce(disabled_at, now()), disabled_reason = $2
                     where id = $1 returning id),
              p as (update ${deliveries} set state = 'parked', done_at = now(),
                      last_error = 'endpoint disabled: ' || $2
                     where endpoint_id in (select id from e) and state = 'pending' returning 1)
         select (select count(*) from e)::int + 0 * (select count(*) from p)::int as n`,
        [id, reason],
      );
      return (rows[0]?.n ?? 0) > 0;
    },
    async enableEndpoint(id) {
      const { rowCount } = await pool.query(
        `update ${endpoints} set disabled_at = null, disabled_reason = null where id = $1`,
        [id],
      );
      return (rowCount ?? 0) > 0;
    },
    async disabledEndpoints() {
      const { rows } = await pool.query<{ id: number; disabled_at: Date; disabled_reason: string | null }>(
        `select id, disabled_at, disabled_reason from ${endpoints} where disabled_at is not null order by id`,
      );
      return rows.map((r) => ({ id: r.id, disabledAt: r.disabled_at, reason: r.disabled_reason ?? '' }));
    },
    async pruneParked(before, limit = 10_000) {
      const { rowCount } = await pool.query(
        `delete from ${deliveries} where id in (
           select id from ${deliveries} where state = 'parked' and done_at < $1 limit $2)`,
        [before, limit],
      );
      return rowCount ?? 0;
    },
    async expirePending(endpointIds, limit = 10_000) {
      if (endpointIds.length === 0) return 0;
      const { rowCount } = await pool.query(
        `update ${deliveries} set state = 'parked', done_at = now(),
           last_error = coalesce(last_error || ' ', '') || '(retry period over while the endpoint was paused)'
         where id in (
           select id from ${deliveries}
            where state = 'pending' and endpoint_id = any($1::bigint[]) and deadline <= now()
            limit $2)`,
        [endpointIds, limit],
      );
      return rowCount ?? 0;
    },
    async parkedByEndpoint() {
      const { rows } = await pool.query<{ endpoint_id: number; n: number }>(
        `select endpoint_id, count(*)::int as n from ${deliveries} where state = 'parked' group by endpoint_id`,
      );
      return new Map(rows.map((r) => [Number(r.endpoint_id), r.n]));
    },
  };
}
