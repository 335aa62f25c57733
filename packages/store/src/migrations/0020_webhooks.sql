-- Callbacks (webhooks, #28 item 3): operators register endpoints; the deliverer
-- (`vault-yield webhooks run`, services/cli/src/webhooks) sends every matching ledger row to each,
-- at least once, in order per vault. SQL in packages/store/src/webhooks.

-- New ledger rows are found by the transaction that wrote them (ledger.commit_xid, migration
-- 0021, the live streams' column): the deliverer reads rows by (commit_xid, …) and only below the
-- oldest transaction still running (pg_snapshot_xmin), so a row committed late by a transaction
-- that began early is never skipped.
--
-- 1. Endpoints, each with its delivery cursor: the last ledger row scanned for it, in the order
--    (commit_xid, vault, block_number, tx_index, log_index, block_hash, tx_hash, chain_id), in the
--    ledger of `ledger_schema` (the live projection schema when it was scanned). Rows up to the
--    cursor that match are in webhook_deliveries: the cursor and the rows it queued commit in
--    one transaction, so a restart neither loses nor repeats a scan. A new endpoint starts at
--    the oldest running transaction of the moment it was added (rows from then on).
create table webhook_endpoints (
  id                 bigserial primary key,
  url                text not null,
  -- whsec_<base64>: signs every delivery (Standard Webhooks); shown once, at `add`
  secret             text not null,
  -- null: every vault
  vaults             bytea[],
  -- null: every activity type
  types              text[],
  description        text,
  created_at         timestamptz not null default now(),
  ledger_schema      text not null,
  cursor_xid         xid8 not null,
  cursor_vault       bytea not null default '\x',
  cursor_block       bigint not null default -1,
  cursor_tx_index    integer not null default -2147483648,
  cursor_log_index   integer not null default -2147483648,
  cursor_block_hash  bytea not null default '\x',
  cursor_tx_hash     bytea not null default '\x',
  cursor_chain_id    integer not null default -2147483648,
  -- After the live schema changed (a rebuild's switch): rows of the new ledger below this xid
  -- were written by the build, and are queued only past the position the endpoint had reached
  -- per vault (webhook_vault_marks). Null: no rescan in progress.
  rescan_below       xid8
);

-- 2. Per endpoint and vault, the furthest ledger position scanned: what a rescan after a
--    switch skips (the rebuilt ledger holds again every row the old one had).
create table webhook_vault_marks (
  endpoint_id   bigint not null references webhook_endpoints (id) on delete cascade,
  vault         bytea not null,
  block_number  bigint not null,
  tx_index      integer not null,
  log_index     integer not null,
  primary key (endpoint_id, vault)
);

-- 3. Deliveries: one per (endpoint, ledger row) that matched, its body fixed when queued (a retry
--    sends the same bytes under the same webhook-id). A vault's pending deliveries to an endpoint
--    go one at a time in id order (the order they were queued: the ledger's).
create table webhook_deliveries (
  id               bigserial primary key,
  endpoint_id      bigint not null references webhook_endpoints (id) on delete cascade,
  -- webhook-id: msg_ + 32 hex of sha256(endpoint id and the ledger row's identity), stable
  msg_id           text not null,
  vault            bytea not null,
  type             text not null,
  block_number     bigint not null,
  tx_index         integer not null,
  log_index        integer not null,
  tx_hash          bytea not null,
  body             text not null,
  state            text not null default 'pending' check (state in ('pending', 'delivered', 'parked')),
  attempts         integer not null default 0,
  created_at       timestamptz not null default now(),
  -- retried until then; a failure at or after it parks the delivery
  deadline         timestamptz not null,
  next_attempt_at  timestamptz not null default now(),
  last_attempt_at  timestamptz,
  -- HTTP status of the last attempt (null: no answer: time-out, connection refused, …)
  last_status      integer,
  last_error       text,
  -- when it was delivered or parked
  done_at          timestamptz,
  unique (endpoint_id, msg_id)
);
create index webhook_deliveries_queue on webhook_deliveries (endpoint_id, vault, id) where state = 'pending';
create index webhook_deliveries_state on webhook_deliveries (endpoint_id, state, id);
