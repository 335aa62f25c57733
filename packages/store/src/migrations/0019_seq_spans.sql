-- The indexer's sequence rows, bounded over time (#27 item 8). indexer_vault_seqs kept a row per
-- vault per block with records forever; beyond the reorg window only `vault-yield republish`
-- reads them, and it can recount most of them from the chain. The indexer now compacts them as
-- it advances (packages/store/src/indexer/spans.ts).

-- 1. Whether a row's one record is a `mark` (true), or its records are events (false); null:
--    written before this migration (unknown: compacted as a block that may be a mark).
alter table indexer_vault_seqs add column mark boolean;

-- 2. A vault's rows below the reorg window, compacted: one row per run of consecutive numbers
--    (a revert's number, above the orphaned blocks', breaks a run) and at most a bounded length.
--    Republish recounts a span from the chain: its blocks with records are the blocks with events
--    of the vault in from_block..to_block (as many records as events) and the blocks of `marks`
--    (one record each: a mark where the block has no event of the vault), numbered from
--    first_seq; `blocks` and last_seq check the count, to_hash the chain (a block hash names its
--    ancestors).
create table indexer_vault_seq_spans (
  chain_id      integer not null,
  vault         text not null,
  from_block    bigint not null,
  to_block      bigint not null,
  to_hash       text not null,
  first_seq     bigint not null,
  last_seq      bigint not null,
  -- blocks with records in the span
  blocks        integer not null,
  -- blocks of one record that may be a mark (every mark's), ascending, packed: unsigned LEB128
  -- varints of the differences, the first from from_block
  marks         bytea not null,
  mark_count    integer not null,
  primary key (chain_id, vault, from_block)
);
