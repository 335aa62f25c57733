/**
 * Callbacks (webhooks): endpoints, their delivery cursors and their deliveries (migration 0020).
 * The deliverer (services/webhooks) scans each endpoint's new ledger rows into
 * webhook_deliveries (`enqueue`: the cursor moves in the same statement), sends each vault's
 * oldest pending delivery (`dueHeads`) and records what came back (`recordOutcomes`).
 *
 * Endpoint state lives in one schema (the deliverer's `schema`, by default the original projection
 * schema, like the indexer's checkpoint), the ledger it scans in the live projection schema: after
 * a rebuild's switch the cursors move to the new ledger (`enqueue` rescans it, skipping per vault
 * what the endpoint had reached).
 */
import { createHash } from 'node:crypto';
import { parseVaultId, vaultId } from '@vault-yield/domain';
import { bytesToHex, ident, type Pool, type PoolClient, withTransaction } from '../pool/index.js';
import { openSecret, sealedKeyId, sealSecret, type WebhookSecretKeys } from './secrets.js';

type Queryable = Pick<Pool, 'query'>;

export interface WebhookEndpoint {
  id: number;
  url: string;
  /**
   * Null: every vault. Otherwise vault ids (`eip155:{chainId}:0x…`: that vault on that chain) and
   * bare addresses (`0x…`: that address on every chain), lowercase, as given.
   */
  vaults: string[] | null;
  /** Null: every activity type. */
  types: string[] | null;
  description: string | null;
  createdAt: Date;
  /** The projection schema whose ledger the cursor is in. */
  ledgerSchema: string;
  /** Deliveries by state. */
  pending: number;
  delivered: number;
  parked: number;
}

export interface NewWebhookEndpoint {
  url: string;
  /** The signing secret (whsec_…): stored sealed under the store's current key (webhook_secrets). */
  secret: string;
  /** Null: every vault. Vault ids (`eip155:{chainId}:0x…`) and bare addresses (every chain). */
  vaults: readonly string[] | null;
  types: readonly string[] | null;
  description?: string;
  /** The live projection schema: the cursor starts at the end of its ledger. */
  ledgerSchema: string;
}

export type DeliveryState = 'pending' | 'delivered' | 'parked';

export interface WebhookDelivery {
  id: number;
  endpointId: number;
  msgId: string;
  chainId: number;
  vault: string;
  type: string;
  blockNumber: number;
  txIndex: number;
  logIndex: number;
  txHash: string;
  state: DeliveryState;
  attempts: number;
  createdAt: Date;
  deadline: Date;
  nextAttemptAt: Date;
  lastAttemptAt: Date | null;
  lastStatus: number | null;
  lastError: string | null;
  doneAt: Date | null;
}

/** A delivery to attempt now: the oldest pending one of its (endpoint, chain, vault). */
export interface DueDelivery {
  id: number;
  endpointId: number;
  url: string;
  secret: string;
  msgId: string;
  chainId: number;
  vault: string;
  body: string;
  attempts: number;
  deadline: Date;
}

/** What one attempt came to. */
export interface DeliveryOutcome {
  id: number;
  state: DeliveryState;
  /** HTTP status, null when no answer came. */
  status: number | null;
  error: string | null;
  /** Pending: when to try again. */
  nextAttemptAt?: Date;
}

export interface EnqueueResult {
  /** Ledger rows the cursor moved over. */
  scanned: number;
  /** Deliveries queued (rows that matched and were not queued before). */
  queued: number;
  /** The cursor moved to another ledger schema (a rebuild's switch) first. */
  switched: boolean;
}

/**
 * The webhook-id of a ledger row for an endpoint: `msg_` and 32 hex digits of sha256 over the
 * endpoint id and the row's identity (chain, block hash, tx hash, log index, vault). The same for
 * every attempt, every restart and a row queued again, so receivers dedupe on it.
 */
export function webhookMessageId(
  endpointId: number,
  row: { chainId: number; blockHash: string; txHash: string; logIndex: number; vault: string },
): string {
  const key = `${endpointId}:${row.chainId}:${row.blockHash.slice(2)}:${row.txHash.slice(2)}:${row.logIndex}:${row.vault.slice(2)}`;
  return `msg_${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}

/** The same id in SQL, over the ledger's columns (`l.`), for `$1` the endpoint id. */
const MSG_ID = `'msg_' || left(encode(sha256(convert_to($1::bigint || ':' || l.chain_id || ':' || encode(l.block_hash, 'hex')
  || ':' || encode(l.tx_hash, 'hex') || ':' || l.log_index || ':' || encode(l.vault, 'hex'), 'UTF8')), 'hex'), 32)`;

/**
 * The body of a delivery (Standard Webhooks' shape): `{ type, timestamp, data }`, `timestamp` the
 * row's block time (ISO 8601, UTC), `data` the ledger row exactly as `GET /v1/vault/{address}/events`
 * serves it (packages/store/src/queries/ledger.ts, ROW).
 */
const BODY = `json_build_object(
    'type', l.type,
    'timestamp', to_char(to_timestamp(l.ts / 1000.0) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'data', json_build_object(
      'id', l.chain_id || ':' || ${bytesToHex('l.block_hash')} || ':' || ${bytesToHex('l.tx_hash')} || ':' || l.log_index || ':' || ${bytesToHex('l.vault')},
      'vault', ${bytesToHex('l.vault')}, 'chainId', l.chain_id, 'type', l.type, 'txHash', ${bytesToHex('l.tx_hash')},
      'blockNumber', l.block_number, 'blockHash', ${bytesToHex('l.block_hash')}, 'txIndex', l.tx_index,
      'logIndex', l.log_index, 'ts', l.ts, 'data', l.payload, 'amounts', l.amounts))::text`;

/**
 * The scan order of the ledger (commit_xid first: the order rows became visible, near enough; then
 * the vault, its chain beside its address: migration 0029).
 */
const KEY = 'commit_xid, chain_id, vault, block_number, tx_index, log_index, block_hash, tx_hash';
const CURSOR =
  'cursor_xid, cursor_chain_id, cursor_vault, cursor_block, cursor_tx_index, cursor_log_index, cursor_block_hash, cursor_tx_hash';

/**
 * Whether ledger row `l` passes endpoint `e`'s vault filter: none, or its vault id or its bare
 * address (every chain) listed (migration 0029).
 */
const VAULT_MATCH = `(e.vaults is null or ${bytesToHex('l.vault')} = any(e.vaults)
  or 'eip155:' || l.chain_id || ':' || ${bytesToHex('l.vault')} = any(e.vaults))`;

/**
 * An endpoint's vault filter entry, normalised: a vault id (`eip155:{chainId}:0x…`) or a bare
 * address (`0x…`: every chain), lowercase; null for anything else.
 */
export function webhookVaultFilter(entry: string): string | null {
  const ref = parseVaultId(entry.trim());
  if (ref) return vaultId(ref.chainId, ref.vault);
  const bare = entry.trim();
  return /^0x[0-9a-fA-F]{40}$/.test(bare) ? bare.toLowerCase() : null;
}

interface EndpointRow {
  id: number;
  url: string;
  vaults: string[] | null;
  types: string[] | null;
  description: string | null;
  created_at: Date;
  ledger_schema: string;
  pending: number;
  delivered: number;
  parked: number;
}

interface DeliveryRow {
  id: number;
  endpoint_id: number;
  msg_id: string;
  chain_id: number;
  vault: string;
  type: string;
  block_number: number;
  tx_index: number;
  log_index: number;
  tx_hash: string;
  state: DeliveryState;
  attempts: number;
  created_at: Date;
  deadline: Date;
  next_attempt_at: Date;
  last_attempt_at: Date | null;
  last_status: number | null;
  last_error: string | null;
  done_at: Date | null;
}

const deliveryOf = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  msgId: r.msg_id,
  chainId: r.chain_id,
  vault: r.vault,
  type: r.type,
  blockNumber: r.block_number,
  txIndex: r.tx_index,
  logIndex: r.log_index,
  txHash: r.tx_hash,
  state: r.state,
  attempts: r.attempts,
  createdAt: r.created_at,
  deadline: r.deadline,
  nextAttemptAt: r.next_attempt_at,
  lastAttemptAt: r.last_attempt_at,
  lastStatus: r.last_status,
  lastError: r.last_error,
  doneAt: r.done_at,
});

/** How the stored signing secrets stand: plaintext ones (from before encryption), sealed ones by key id. */
export interface WebhookSecretsState {
  plaintext: number;
  sealed: Record<string, number>;
}

export interface WebhookStore {
  /** The schema holding the webhook tables. */
  readonly schema: string;
  /**
   * Seals every plaintext secret (from before migration 0024's encryption) under the current key,
   * and checks every sealed one opens with the keys given (throws naming the key id otherwise).
   * Idempotent; returns how many it sealed. Needs the keys.
   */
  sealPlaintext(): Promise<number>;
  /** Seals every secret not under the current key (plaintext or an older key) under it; returns how many. */
  rekey(): Promise<number>;
  /** Secrets by state (no secret read: the key ids only). */
  secretsState(): Promise<WebhookSecretsState>;
  addEndpoint(e: NewWebhookEndpoint): Promise<WebhookEndpoint>;
  listEndpoints(): Promise<WebhookEndpoint[]>;
  /** Removes the endpoint and its deliveries; false when there is none of that id. */
  removeEndpoint(id: number): Promise<boolean>;
  /** The endpoint ids (enqueue goes endpoint by endpoint). */
  endpointIds(): Promise<number[]>;
  /**
   * Moves one endpoint's cursor over at most `limit` new ledger rows of `ledgerSchema` (rows of
   * transactions that are over: below the oldest one still running), queueing the rows that match
   * it, in one transaction. `deadline`: until when the queued deliveries are retried.
   */
  enqueue(
    endpointId: number,
    ledgerSchema: string,
    o: { limit: number; activityTypes: readonly string[]; deadline: Date },
  ): Promise<EnqueueResult>;
  /**
   * The oldest pending delivery of each (endpoint, vault), those due now, at most `limit`, taken
   * round robin over endpoints (each endpoint's longest-due head, then each one's second, …), at
   * most `perEndpoint` of one endpoint; none of a disabled endpoint.
   */
  dueHeads(limit: number, perEndpoint?: number): Promise<DueDelivery[]>;
  /** Records attempts' outcomes, in one statement. */
  recordOutcomes(outcomes: readonly DeliveryOutcome[]): Promise<void>;
  /** Deliveries, newest first: of one endpoint or all, of one state or all. */
  listDeliveries(f: {
    endpointId?: number;
    state?: DeliveryState;
    limit: number;
  }): Promise<WebhookDelivery[]>;
  /**
   * Parked deliveries back to pending (attempts from 0, due now, retried until `deadline`): the
   * one `id`, or every parked one (of one endpoint). Returns how many.
   */
  retryParked(f: { id?: number; endpointId?: number; deadline: Date }): Promise<number>;
  /** Deletes delivered rows done before `before`; returns how many. */
  pruneDelivered(before: Date, limit?: number): Promise<number>;
  /** Pending and parked deliveries, for the metrics (delivered: 0, not counted). */
  counts(): Promise<Record<DeliveryState, number>>;
}

/**
 * The webhook tables of `schema`. `keys`: the signing secrets' keyring (WEBHOOK_SECRET_KEY and
 * older keys): what seals a new endpoint's secret and opens those of due deliveries. Without it,
 * a new secret is stored as given (the CLI and the deliverer refuse to run without a key; only a
 * test's store goes without) and a sealed one cannot be opened.
 */
export function createWebhookStore(pool: Pool, schema: string, keys?: WebhookSecretKeys): WebhookStore {
  const s = ident(schema);
  const endpoints = `${s}.webhook_endpoints`;
  const secrets = `${s}.webhook_secrets`;
  const deliveries = `${s}.webhook_deliveries`;
  const marks = `${s}.webhook_vault_marks`;

  const selectEndpoints = (
    where: string,
  ) => `select e.id, e.url, e.description, e.created_at, e.ledger_schema, e.types,
      e.vaults,
      (select count(*) from ${deliveries} d where d.endpoint_id = e.id and d.state = 'pending')::int as pending,
      (select count(*) from ${deliveries} d where d.endpoint_id = e.id and d.state = 'delivered')::int as delivered,
      (select count(*) from ${deliveries} d where d.endpoint_id = e.id and d.state = 'parked')::int as parked
    from ${endpoints} e ${where} order by e.id`;
  const endpointOf = (r: EndpointRow): WebhookEndpoint => ({
    id: r.id,
    url: r.url,
    vaults: r.vaults,
    types: r.types,
    description: r.description,
    createdAt: r.created_at,
    ledgerSchema: r.ledger_schema,
    pending: r.pending,
    delivered: r.delivered,
    parked: r.parked,
  });

  /**
   * The cursor moves to another ledger (a switch): from its start, skipping what marks cover.
   * First the marks take in everything the cursor had passed in the old ledger — the rows it
   * scanned and those from before the endpoint was added (below its first cursor): a vault with
   * no row since then has no mark yet, and the rebuilt ledger holds its whole history again,
   * which the endpoint never asked for. (When the old ledger is gone, the marks stand as they are.)
   */
  async function switchLedger(
    client: PoolClient,
    endpointId: number,
    from: string,
    ledgerSchema: string,
  ): Promise<void> {
    const { rows: old } = await client.query<{ ok: boolean }>('select to_regclass($1) is not null as ok', [
      `${ident(from)}.ledger`,
    ]);
    if (old[0]?.ok)
      await client.query(
        `with e as (select * from ${endpoints} where id = $1)
         insert into ${marks} (endpoint_id, chain_id, vault, block_number, tx_index, log_index)
         select distinct on (l.chain_id, l.vault) $1, l.chain_id, l.vault, l.block_number, l.tx_index, l.log_index
           from e, ${ident(from)}.ledger l
          where (l.${KEY.split(', ').join(', l.')}) <= (e.${CURSOR.split(', ').join(', e.')})
          order by l.chain_id, l.vault, l.block_number desc, l.tx_index desc, l.log_index desc
         on conflict (endpoint_id, chain_id, vault) do update
           set block_number = excluded.block_number, tx_index = excluded.tx_index, log_index = excluded.log_index
           where (excluded.block_number, excluded.tx_index, excluded.log_index)
               > (webhook_vault_marks.block_number, webhook_vault_marks.tx_index, webhook_vault_marks.log_index)`,
        [endpointId],
      );
    await client.query(
      `update ${endpoints} set ledger_schema = $2, cursor_xid = '0'::xid8, cursor_vault = '\\x', cursor_block = -1,
         cursor_tx_index = -2147483648, cursor_log_index = -2147483648, cursor_block_hash = '\\x',
         cursor_tx_hash = '\\x', cursor_chain_id = -2147483648,
         rescan_below = pg_snapshot_xmax(pg_current_snapshot())
       where id = $1`,
      [endpointId, ledgerSchema],
    );
  }

  const needKeys = (what: string): WebhookSecretKeys => {
    if (!keys) throw new Error(`${what} needs the webhook secret key (WEBHOOK_SECRET_KEY)`);
    return keys;
  };

  /** Re-seals, in one transaction, the secrets `which` picks under the current key; returns how many. */
  async function reseal(which: (stored: string) => boolean, what: string): Promise<number> {
    const ring = needKeys(what);
    return withTransaction(pool, async (client) => {
      const { rows } = await client.query<{ endpoint_id: number; secret: string }>(
        `select endpoint_id, secret from ${secrets} order by endpoint_id for update`,
      );
      let n = 0;
      for (const r of rows) {
        const plain = openSecret(r.secret, ring); // throws for a key not configured
        if (!which(r.secret)) continue;
        await client.query(`update ${secrets} set secret = $2 where endpoint_id = $1`, [
          r.endpoint_id,
          sealSecret(plain, ring),
        ]);
        n++;
      }
      return n;
    });
  }

  return {
    schema,
    sealPlaintext: () => reseal((stored) => sealedKeyId(stored) === null, 'sealing plaintext secrets'),
    rekey: () => reseal((stored) => sealedKeyId(stored) !== needKeys('rekey').current.id, 'rekey'),
    async secretsState() {
      const { rows } = await pool.query<{ key_id: string | null; n: number }>(
        `select case when secret like 'v1:%' then split_part(secret, ':', 2) end as key_id, count(*)::int as n
           from ${secrets} group by 1`,
      );
      const out: WebhookSecretsState = { plaintext: 0, sealed: {} };
      for (const r of rows) {
        if (r.key_id === null) out.plaintext += r.n;
        else out.sealed[r.key_id] = r.n;
      }
      return out;
    },
    async addEndpoint(e) {
      const stored = keys ? sealSecret(e.secret, keys) : e.secret;
      const vaults =
        e.vaults === null
          ? null
          : [
              ...new Set(
                e.vaults.map((v) => {
                  const entry = webhookVaultFilter(v);
                  if (entry === null)
                    throw new Error(
                      `not a vault id (eip155:{chainId}:0x…) nor an address: ${JSON.stringify(v)}`,
                    );
                  return entry;
                }),
              ),
            ];
      const { rows } = await pool.query<{ id: number }>(
        `with e as (
           insert into ${endpoints} (url, vaults, types, description, ledger_schema, cursor_xid)
           values ($1, $3::text[], $4::text[], $5, $6, pg_snapshot_xmin(pg_current_snapshot()))
           returning id)
         insert into ${secrets} (endpoint_id, secret) select id, $2 from e returning endpoint_id as id`,
        [e.url, stored, vaults, e.types, e.description ?? null, e.ledgerSchema],
      );
      const id = rows[0]?.id;
      if (id === undefined) throw new Error('webhook endpoint not inserted');
      const { rows: out } = await pool.query<EndpointRow>(selectEndpoints('where e.id = $1'), [id]);
      return endpointOf(out[0] as EndpointRow);
    },
    async listEndpoints() {
      const { rows } = await pool.query<EndpointRow>(selectEndpoints(''));
      return rows.map(endpointOf);
    },
    async removeEndpoint(id) {
      const { rowCount } = await pool.query(`delete from ${endpoints} where id = $1`, [id]);
      return (rowCount ?? 0) > 0;
    },
    async endpointIds() {
      const { rows } = await pool.query<{ id: number }>(`select id from ${endpoints} order by id`);
      return rows.map((r) => r.id);
    },
    async enqueue(endpointId, ledgerSchema, o) {
      return withTransaction(pool, async (client) => {
        const { rows } = await client.query<{ ledger_schema: string }>(
          `select ledger_schema from ${endpoints} where id = $1 for update`,
          [endpointId],
        );
        const row = rows[0];
        if (!row) return { scanned: 0, queued: 0, switched: false };
        const switched = row.ledger_schema !== ledgerSchema;
        if (switched) await switchLedger(client, endpointId, row.ledger_schema, ledgerSchema);
        const l = `${ident(ledgerSchema)}.ledger`;
        // One statement: the next rows past the cursor (of finished transactions), the matching
        // ones queued in scan order, the per-vault marks and the cursor moved to the last row.
        const { rows: result } = await client.query<{ scanned: number; queued: number }>(
          `with e as (select * from ${endpoints} where id = $1),
           batch as materialized (
             select l.*, (l.commit_xid < e.rescan_below and exists (
                 select 1 from ${marks} m where m.endpoint_id = $1 and m.chain_id = l.chain_id and m.vault = l.vault
                   and (m.block_number, m.tx_index, m.log_index) >= (l.block_number, l.tx_index, l.log_index))) as seen
               from e, ${l} l
              where l.commit_xid >= e.cursor_xid
                and l.commit_xid < pg_snapshot_xmin(pg_current_snapshot())
                and (l.${KEY.split(', ').join(', l.')}) > (e.${CURSOR.split(', ').join(', e.')})
              order by l.${KEY.split(', ').join(', l.')}
              limit $2),
           ins as (
             insert into ${deliveries} (endpoint_id, msg_id, chain_id, vault, type, block_number, tx_index, log_index, tx_hash, body, deadline)
             select $1, ${MSG_ID}, l.chain_id, l.vault, l.type, l.block_number, l.tx_index, l.log_index, l.tx_hash, ${BODY}, $4
               from batch l, e
              where l.type = any($3::text[]) and (e.types is null or l.type = any(e.types))
                and ${VAULT_MATCH} and not coalesce(l.seen, false)
              order by l.${KEY.split(', ').join(', l.')}
             on conflict (endpoint_id, msg_id) do nothing
             returning 1),
           mark as (
             insert into ${marks} (endpoint_id, chain_id, vault, block_number, tx_index, log_index)
             select distinct on (chain_id, vault) $1, chain_id, vault, block_number, tx_index, log_index from batch
              order by chain_id, vault, block_number desc, tx_index desc, log_index desc
             on conflict (endpoint_id, chain_id, vault) do update
               set block_number = excluded.block_number, tx_index = excluded.tx_index, log_index = excluded.log_index
               where (excluded.block_number, excluded.tx_index, excluded.log_index)
                   > (webhook_vault_marks.block_number, webhook_vault_marks.tx_index, webhook_vault_marks.log_index)
             returning 1),
           last as (select * from batch order by ${KEY.split(', ')
             .map((c) => `${c} desc`)
             .join(', ')} limit 1),
           moved as (
             update ${endpoints} c set (${CURSOR}) = (select ${KEY} from last),
               rescan_below = case when c.rescan_below is not null
                 and (select commit_xid from last) >= c.rescan_below then null else c.rescan_below end
              where c.id = $1 and exists (select 1 from last)
             returning 1)
           select (select count(*) from batch)::int as scanned, (select count(*) from ins)::int as queued,
             (select count(*) from mark)::int + (select count(*) from moved)::int as _`,
          [endpointId, o.limit, o.activityTypes, o.deadline],
        );
        const r = result[0] ?? { scanned: 0, queued: 0 };
        // A rescan that reached the rows written after the switch ends with them.
        if (r.scanned < o.limit)
          await client.query(
            `update ${endpoints} set rescan_below = null where id = $1 and rescan_below is not null
               and rescan_below <= pg_snapshot_xmin(pg_current_snapshot())`,
            [endpointId],
          );
        return { scanned: r.scanned, queued: r.queued, switched };
      });
    },
    async dueHeads(limit, perEndpoint = limit) {
      const { rows } = await pool.query<{
        id: number;
        endpoint_id: number;
        url: string;
        secret: string;
        msg_id: string;
        chain_id: number;
        vault: string;
        body: string;
        attempts: number;
        deadline: Date;
      }>(
        // A loose index scan of webhook_deliveries_queue: each (endpoint, chain, vault) with
        // pending deliveries, then its oldest one; two index probes a vault, however long its
        // queue. Then round robin: an endpoint with many due rows never fills the batch before
        // the others.
        `select * from (with recursive pairs as (
           (select endpoint_id, chain_id, vault from ${deliveries} where state = 'pending'
             order by endpoint_id, chain_id, vault limit 1)
           union all
           select n.endpoint_id, n.chain_id, n.vault from pairs p, lateral (
             select endpoint_id, chain_id, vault from ${deliveries}
              where state = 'pending' and (endpoint_id, chain_id, vault) > (p.endpoint_id, p.chain_id, p.vault)
              order by endpoint_id, chain_id, vault limit 1) n),
         heads as (
           select h.id, h.next_attempt_at from pairs p, lateral (
             select id, next_attempt_at from ${deliveries}
              where state = 'pending' and endpoint_id = p.endpoint_id and chain_id = p.chain_id and vault = p.vault
              order by id limit 1) h)
         select d.id, d.endpoint_id, e.url, k.secret, d.msg_id, d.chain_id, ${bytesToHex('d.vault')} as vault, d.body,
                d.attempts, d.deadline, h.next_attempt_at,
                row_number() over (partition by d.endpoint_id order by h.next_attempt_at, h.id) as rank
           from heads h join ${deliveries} d on d.id = h.id join ${endpoints} e on e.id = d.endpoint_id
           join ${secrets} k on k.endpoint_id = e.id
          where h.next_attempt_at <= now() and e.disabled_at is null) x
          where x.rank <= $2
          order by x.rank, x.next_attempt_at, x.id
          limit $1`,
        [limit, perEndpoint],
      );
      return rows.map((r) => ({
        id: r.id,
        endpointId: r.endpoint_id,
        url: r.url,
        secret: openSecret(r.secret, keys),
        msgId: r.msg_id,
        chainId: r.chain_id,
        vault: r.vault,
        body: r.body,
        attempts: r.attempts,
        deadline: r.deadline,
      }));
    },
    async recordOutcomes(outcomes) {
      if (outcomes.length === 0) return;
      await pool.query(
        `update ${deliveries} d set state = x.state, attempts = d.attempts + 1, last_attempt_at = now(),
           last_status = x.status, last_error = x.error,
           next_attempt_at = coalesce(x.next_at, d.next_attempt_at),
           done_at = case when x.state = 'pending' then null else now() end
         from json_to_recordset($1::json) as x(id bigint, state text, status int, error text, next_at timestamptz)
         where d.id = x.id and d.state = 'pending'`,
        [
          JSON.stringify(
            outcomes.map((o) => ({
              id: o.id,
              state: o.state,
              status: o.status,
              error: o.error,
              next_at: o.nextAttemptAt?.toISOString() ?? null,
            })),
          ),
        ],
      );
    },
    async listDeliveries(f) {
      const values: unknown[] = [f.limit];
      const where: string[] = [];
      if (f.endpointId !== undefined) {
        values.push(f.endpointId);
        where.push(`endpoint_id = $${values.length}`);
      }
      if (f.state !== undefined) {
        values.push(f.state);
        where.push(`state = $${values.length}`);
      }
      const { rows } = await pool.query<DeliveryRow>(
        `select id, endpoint_id, msg_id, chain_id, ${bytesToHex('vault')} as vault, type, block_number, tx_index, log_index,
                ${bytesToHex('tx_hash')} as tx_hash, state, attempts, created_at, deadline, next_attempt_at,
                last_attempt_at, last_status, last_error, done_at
           from ${deliveries} ${where.length ? `where ${where.join(' and ')}` : ''}
          order by id desc limit $1`,
        values,
      );
      return rows.map(deliveryOf);
    },
    async retryParked(f) {
      const values: unknown[] = [f.deadline];
      const where = [`state = 'parked'`];
      if (f.id !== undefined) {
        values.push(f.id);
        where.push(`id = $${values.length}`);
      }
      if (f.endpointId !== undefined) {
        values.push(f.endpointId);
        where.push(`endpoint_id = $${values.length}`);
      }
      const { rowCount } = await pool.query(
        `update ${deliveries} set state = 'pending', attempts = 0, next_attempt_at = now(), deadline = $1, done_at = null
          where ${where.join(' and ')}`,
        values,
      );
      return rowCount ?? 0;
    },
    async pruneDelivered(before, limit = 10_000) {
      const { rowCount } = await pool.query(
        `delete from ${deliveries} where id in (
           select id from ${deliveries} where state = 'delivered' and done_at < $1 limit $2)`,
        [before, limit],
      );
      return rowCount ?? 0;
    },
    async counts() {
      const { rows } = await pool.query<{ state: DeliveryState; n: number }>(
        `select state, count(*)::int as n from ${deliveries} where state in ('pending', 'parked') group by state`,
      );
      const out: Record<DeliveryState, number> = { pending: 0, delivered: 0, parked: 0 };
      for (const r of rows) out[r.state] = r.n;
      return out;
    },
  };
}

/**
 * Whether `schema` has the webhook tables (migration 0020), whoever asks (the catalogue, not
 * information_schema, which hides tables the role has no privilege on: a role refused them then
 * reads "permission denied", not "no tables").
 */
export async function hasWebhookTables(db: Queryable, schema: string): Promise<boolean> {
  const { rows } = await db.query<{ ok: boolean }>(
    `select exists (select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relname = 'webhook_endpoints' and c.relkind = 'r') as ok`,
    [schema],
  );
  return rows[0]?.ok === true;
}

/**
 * How the signing secrets of `schema` stand, for `vault-yield status`: null without webhook
 * tables; `readable: false` (and the role asking) when this role may not read the secrets — only
 * the migrator and the webhooks role may, so a serving role cannot tell, never reads 0; else the
 * secrets still plaintext (from before encryption: `webhooks rekey` or the deliverer seals them)
 * and those sealed. No secret leaves the database: a count by prefix.
 */
export async function webhookSecretsStatus(
  db: Queryable,
  schema: string,
): Promise<
  | { readable: false; role: string; table: SecretsTable }
  | { readable: true; plaintext: number; sealed: number; table: SecretsTable }
  | null
> {
  // Since 0025 the secrets have a table of their own; before it (0020–0024) they are a column of
  // the endpoints, plaintext all (nothing sealed them yet).
  const { rows } = await db.query<{ tbl: string | null; readable: boolean | null; role: string }>(
    `select c.relname as tbl, current_user as role,
       case when c.oid is not null then has_column_privilege(c.oid, 'secret', 'select') end as readable
       from (select 1) one
       left join pg_namespace n on n.nspname = $1
       left join lateral (
         select c.oid, c.relname from pg_class c
          where c.relnamespace = n.oid and c.relkind in ('r', 'p')
            and (c.relname = 'webhook_secrets'
                 or (c.relname = 'webhook_endpoints' and exists (
                       select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'secret' and not a.attisdropped)))
          order by c.relname = 'webhook_secrets' desc limit 1
       ) c on true`,
    [schema],
  );
  const r = rows[0];
  if (!r?.tbl) return null;
  const table = r.tbl as SecretsTable;
  if (!r.readable) return { readable: false, role: r.role, table };
  try {
    const { rows: counts } = await db.query<{ plaintext: number; sealed: number }>(
      `select count(*) filter (where secret not like 'v1:%')::int as plaintext,
              count(*) filter (where secret like 'v1:%')::int as sealed
         from ${ident(schema)}.${ident(table)}`,
    );
    return { readable: true, plaintext: counts[0]?.plaintext ?? 0, sealed: counts[0]?.sealed ?? 0, table };
  } catch (err) {
    // Refused all the same (the schema's usage, a policy): cannot tell.
    if ((err as { code?: unknown }).code === '42501') return { readable: false, role: r.role, table };
    throw err;
  }
}

/** Where the signing secrets are: their own table (0025 on), or the endpoints' column before it. */
export type SecretsTable = 'webhook_secrets' | 'webhook_endpoints';

/**
 * The role of the deliverer (`vault-yield webhooks run`) and of the operators' `webhooks` CLI
 * besides the migrator: the only one, with the owner, granted the webhook tables
 * (infra/postgres ROLES.webhooks; the same name).
 */
export const WEBHOOKS_ROLE = 'vault_yield_webhooks';

/**
 * The webhook tables of `schema` belong to their owner (the migrator) and the webhooks role
 * alone: every privilege any other role (the reader, the writer, PUBLIC) holds on them or their
 * sequences — from a blanket `grant … on all tables`, or default privileges when a migration
 * created them — is revoked, and `webhooksRole` (when it exists) gets DML on them. Run after
 * every grant (migrate's grantRead / grantWrite, the switch's), so no option of a migration nor
 * its order ever leaves a secret readable by a serving role.
 */
export async function lockWebhookTables(
  db: Queryable,
  schema: string,
  webhooksRole: string = WEBHOOKS_ROLE,
): Promise<void> {
  const { rows } = await db.query<{ rel: string; kind: string; grantee: string | null }>(
    `select c.relname as rel, c.relkind::text as kind, case when a.grantee = 0 then null else r.rolname end as grantee
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       cross join lateral aclexplode(c.relacl) a
       left join pg_roles r on r.oid = a.grantee
      where n.nspname = $1 and c.relname like 'webhook\\_%' and c.relkind in ('r', 'p', 'S', 'v', 'm')
        and a.grantee <> c.relowner and (r.rolname is distinct from $2)
      group by 1, 2, 3`,
    [schema, webhooksRole],
  );
  for (const r of rows)
    await db.query(
      `revoke all on ${r.kind === 'S' ? 'sequence ' : ''}${ident(schema)}.${ident(r.rel)} from ${r.grantee === null ? 'public' : ident(r.grantee)}`,
    );
  const { rows: present } = await db.query<{ role: boolean; tables: string[] }>(
    `select exists (select 1 from pg_roles where rolname = $2) as role,
       coalesce((select array_agg(c.relname::text order by c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = $1 and c.relkind in ('r', 'p') and c.relname like 'webhook\\_%'), '{}') as tables`,
    [schema, webhooksRole],
  );
  const p = present[0];
  if (!p?.role || p.tables.length === 0) return;
  const w = ident(webhooksRole);
  await db.query(`grant usage on schema ${ident(schema)} to ${w}`);
  await db.query(
    `grant select, insert, update, delete on ${p.tables.map((t) => `${ident(schema)}.${ident(t)}`).join(', ')} to ${w}`,
  );
  const { rows: seqs } = await db.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relkind = 'S' and c.relname like 'webhook\\_%\\_seq'`,
    [schema],
  );
  for (const q of seqs)
    await db.query(`grant usage, select on sequence ${ident(schema)}.${ident(q.name)} to ${w}`);
}

/**
 * The endpoints' signing secrets are no serving role's: kept for callers that revoke them from one
 * role, it locks the webhook tables whole (lockWebhookTables: every role but the owner and the
 * webhooks role loses them).
 */
export async function revokeWebhookSecrets(db: Queryable, schema: string, _role?: string): Promise<void> {
  await lockWebhookTables(db, schema);
}
