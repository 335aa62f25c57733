-- One ordering index for the ledger instead of two (every btree index is paid on each projected
-- record). Within a vault, block time never decreases as blocks advance (a consensus rule of
-- every EVM chain this service reads), so newest-first by (ts, block, tx, log) is the same order
-- as by (block, tx, log): one index serves the events page, its since/until window as an index
-- range, and the re-fold's block order.
drop index ledger_vault_order;
drop index ledger_vault_ts;
create index ledger_vault_ts on ledger (vault, ts desc, block_number desc, tx_index desc, log_index desc);
