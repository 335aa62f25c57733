-- Marks leave the ledger. A `mark` is a revaluation at a block (no activity): GET events and the tx
-- look-up never serve it, yet it was ≈ 40 % of the ledger's rows and of what Postgres spent on them
-- (bench:projector: the ledger COPY was half the projector's Postgres time). A sequenced mark
-- (record schema 3) needs no row: its sequence number already catches a republished copy, and
-- re-folds take it from the record bundles, which hold every applied record's body anyway.
--
-- A bundle written from now on is the authority on its sequenced marks. An older bundle is not:
-- its marks have ledger rows, and a body whose row a revert deleted is still in it, so its marks
-- are taken only through the ledger, as before. (A re-fold after a revert writes the vault's
-- surviving records back as one new bundle, so a reverted mark never stays in a bundle that counts.)
-- Unsequenced marks (schema 2 logs) keep their ledger rows: the ledger is their duplicate check.
alter table record_bundles add column marks_off_ledger boolean not null default false;
alter table record_bundles alter column marks_off_ledger set default true;
