-- 1. Realised returns from exact values, per strategy in force (packages/domain returns).
--    strategy: the vault's strategy after the point's record (the sub-period ending at the next
--    point counts for it); return_index: the fold's exact time-weighted index (1 at creation).
--    Rows written before this migration get '' and 1: `vault-yield rebuild` recomputes them.
alter table equity_points
  add column strategy text not null default '',
  add column return_index numeric not null default 1;

-- 2. Dead letters nobody can miss: the vault (the message key), why (decode | envelope | fold),
--    so a snapshot can say it is behind and `vault-yield dead-letters retry` can re-apply a
--    vault's letters in its order.
alter table dead_letters
  add column vault text,
  add column kind text not null default 'fold';
create index dead_letters_vault on dead_letters (vault, partition, "offset");

-- 3. A retry re-folds vaults outside the consumers' batches: it bumps the partition's epoch under
--    the offsets row lock, so a running projector drops its cached states of that partition.
alter table consumer_offsets add column epoch bigint not null default 0;
