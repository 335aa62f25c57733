-- Projector bookkeeping (additive only: 0001's columns are a contract with the reader).

-- The highest (block_number, tx_index, log_index) among the vault's ledger rows. A record above
-- it cannot be in the ledger yet, so only records at or below it are looked up as possible
-- duplicates (republished by the indexer) — the common, in-order case costs no extra read.
alter table vault_snapshot
  add column head_block_number bigint not null default -1,
  add column head_tx_index integer not null default -1,
  add column head_log_index integer not null default -1;
