-- The events page filtered by type (`?type=`) on a busy vault: ledger_vault_ts reads the vault's
-- rows newest first and skips those of other types, so a rare type (a `suspended` among a
-- million deposits) read every row of the vault for one page. This index puts each type of a
-- vault in the page order: a filtered page reads, per asked type, an index range of at most a
-- page of rows (packages/store/src/queries/ledger.ts, PER_TYPE_MAX), its since/until window and
-- cursor included. One more btree per ledger row on the projector's path, the price of it.
create index ledger_vault_type_ts on ledger (vault, type, ts desc, block_number desc, tx_index desc, log_index desc);
