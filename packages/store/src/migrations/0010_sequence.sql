-- Per-vault sequence numbers (record schema 3): loss in the log becomes visible.

-- 1. The projector: the last sequence number folded per vault (null: none yet, or only schema-2
--    records), and whether records of the vault are held behind a gap (dead letters of kind
--    'gap', with their number, re-applied by the projector itself once the gap is filled).
alter table vault_snapshot
  add column last_seq bigint,
  add column held boolean not null default false;
alter table dead_letters add column seq bigint;

-- 2. The indexer: the numbers it gave each vault in each block (first..last), written ahead of
--    the publish with the kept blocks. A reorg numbers its reverts above every number of the
--    orphaned blocks; `vault-yield republish` re-derives a vault's records of a block range with
--    the numbers they were published with. Rows above a reorg's ancestor go with the rewind.
create table indexer_vault_seqs (
  chain_id      integer not null,
  vault         text not null,
  block_number  bigint not null,
  block_hash    text not null,
  first_seq     bigint not null,
  last_seq      bigint not null,
  primary key (chain_id, vault, block_number)
);
