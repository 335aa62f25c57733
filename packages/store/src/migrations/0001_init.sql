-- Projection tables. Every name is unqualified: the connection's search_path picks the
-- projection schema, so a rebuild can fold into a fresh schema and the reader can be switched.

-- One row per vault: the whole seed §2.1 shape in `snapshot`, served by the reader as it is.
create table vault_snapshot (
  vault           text primary key,            -- lowercase 0x address
  chain_id        integer not null,
  owner           text not null,
  strategy        text not null,
  status          text not null,
  snapshot        jsonb not null,              -- SnapshotView (packages/domain views)
  state           jsonb not null,              -- the fold's exact state, to resume folding
  last_record_id  text not null,               -- identity of the last applied record (ETag source)
  records_applied bigint not null,
  created_at      bigint not null,             -- unix ms of vault.created
  updated_at      bigint not null              -- unix ms of the last applied record
);
create index vault_snapshot_owner on vault_snapshot (owner, vault);
create index vault_snapshot_strategy on vault_snapshot (strategy);

-- Open positions, one row each (also embedded in the snapshot for one-row reads).
create table positions (
  vault        text not null,
  position_id  text not null,
  pool         text not null,
  tick_lower   integer not null,
  tick_upper   integer not null,
  liquidity    numeric(78, 0) not null,
  in_range     boolean not null,
  view         jsonb not null,                 -- PositionView
  primary key (vault, position_id)
);

-- Equity series: one point per applied record that changed value or flows.
create table equity_points (
  vault            text not null,
  ts               bigint not null,            -- unix ms (block time)
  block_number     bigint not null,
  seq              bigint not null,            -- records_applied at this point: total order per vault
  value_usd        numeric not null,
  capital_in_usd   numeric not null,
  capital_out_usd  numeric not null,
  primary key (vault, seq)
);
create index equity_points_vault_ts on equity_points (vault, ts);

-- The ledger: every record of the log as applied, the vault's event history inside Postgres.
-- Re-folding a vault after a revert reads it back in (block_number, tx_index, log_index) order.
create table ledger (
  chain_id      integer not null,
  block_hash    text not null,
  tx_hash       text not null,
  log_index     integer not null,
  vault         text not null,
  block_number  bigint not null,
  tx_index      integer not null,
  ts            bigint not null,               -- unix ms (block time)
  type          text not null,
  payload       jsonb not null,
  record        jsonb not null,                -- the whole VaultRecord, for re-folds
  primary key (vault, chain_id, block_hash, tx_hash, log_index)
);
create index ledger_vault_order on ledger (vault, block_number desc, tx_index desc, log_index desc);
create index ledger_vault_ts on ledger (vault, ts desc);
create index ledger_tx_hash on ledger (tx_hash);

-- Exactly-once: the next offset to read, written in the same transaction as the rows.
create table consumer_offsets (
  group_id    text not null,
  topic       text not null,
  partition   integer not null,
  next_offset bigint not null,
  updated_at  timestamptz not null default now(),
  primary key (group_id, topic, partition)
);

-- Records that failed the schema or that the fold refused: kept whole, never dropped.
create table dead_letters (
  id          bigserial primary key,
  topic       text not null,
  partition   integer not null,
  "offset"    bigint not null,
  key         bytea,
  value       bytea,
  reason      text not null,
  created_at  timestamptz not null default now(),
  unique (topic, partition, "offset")
);

-- Indexer: last published block per chain, and the recent block hashes kept for reorg checks.
create table indexer_checkpoint (
  chain_id      integer primary key,
  block_number  bigint not null,
  block_hash    text not null,
  updated_at    timestamptz not null default now()
);
create table indexer_blocks (
  chain_id      integer not null,
  block_number  bigint not null,
  block_hash    text not null,
  parent_hash   text not null,
  primary key (chain_id, block_number)
);
create table indexer_vaults (
  chain_id      integer not null,
  vault         text not null,
  created_block bigint not null,
  primary key (chain_id, vault)
);
