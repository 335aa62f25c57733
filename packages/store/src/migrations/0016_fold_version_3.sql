-- Fold version 3 (packages/domain FOLD_VERSION): figures over time are functions of the log alone.
-- A fee settles the return index at its own place in its block; a snapshot shows block-end figures
-- only; a block whose last record was dead-lettered ends when a later block arrives; a vault never
-- reads `aiming` after its exit completed; a feed answering 0 or less keeps the last valid price
-- (flagged `invalid`); stale prices of the benchmark basket are flagged; each fee settles the
-- high-water mark at the vault's own rate; tokens sent straight to a vault are booked at their log
-- position (transfer.received). A projection that already
-- holds equity points keeps the version it was folded by (1 or 2) until `vault-yield rebuild`
-- re-folds the log into a fresh schema (migrated empty: 3).
update fold_meta set fold_version = 3 where not exists (select 1 from equity_points);
