-- The version of the fold whose figures a projection holds (packages/domain FOLD_VERSION), so an
-- operator can tell a projection that a new fold would compute differently. 2: a block, not a
-- record, is the step of returns, equity points, the high-water mark and the benchmark basket
-- (a vault's records of one block are all valued at its end). A projection that already holds
-- equity points was folded by version 1: its figures of vaults with several records in one block
-- differ until `vault-yield rebuild` re-folds the log into a fresh schema (migrated empty: 2).
-- `vault-yield status` and the projector say so. A later fold version comes with a migration
-- like this one.
create table fold_meta (
  only_row     boolean primary key default true check (only_row),
  fold_version integer not null
);
insert into fold_meta (fold_version)
  select case when exists (select 1 from equity_points) then 1 else 2 end;
