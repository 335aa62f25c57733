-- The ledger no longer keeps a copy of each whole record. That copy (≈ 1.6 KB of JSON a row) was
-- two thirds of what Postgres spent per projected record (bench:store-ceiling: 29 µs with it,
-- 10 µs without), yet it is read only by re-folds (after a revert, a dead-letter retry). The
-- records' bytes now go into bundles: one row per vault and projector batch holding that batch's
-- records of the vault, as read from the log, one JSON text per line, in log order. A bundle is
-- compressed as one value (lz4 where the server has it), and the records of one vault repeat
-- most of their bytes (addresses, token metadata), so it costs a fraction of the rows it replaces.
--
-- The ledger stays the authority on which records a vault has: a re-fold takes, for each of its
-- ledger rows, the body with the same identity (the latest bundle's when a republished record
-- is in two). Bodies of reverted records stay behind until the vault's ledger is empty.
create table record_bundles (
  id     bigint generated always as identity,
  vault  text not null,
  body   text not null
);
create index record_bundles_vault on record_bundles (vault, id);

do $$
begin
  alter table record_bundles alter column body set compression lz4;
exception when feature_not_supported or invalid_parameter_value then
  -- A server built without lz4: the default (pglz) compression.
  null;
end $$;

-- Existing ledgers: each vault's records become one bundle, in fold order (a record stored with
-- line breaks between its tokens is written again on one line).
insert into record_bundles (vault, body)
select vault, string_agg(
    case when strpos(record::text, E'\n') > 0 then record::jsonb::text else record::text end,
    E'\n' order by block_number, tx_index, log_index, chain_id, tx_hash, block_hash)
from ledger
where type <> 'balance.reconciled'
group by vault;

alter table ledger drop column record;
