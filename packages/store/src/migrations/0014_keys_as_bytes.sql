-- Vault addresses and hashes as bytes in the two tables that get a row per record. They were text
-- ("0x" and lowercase hex: 42 and 66 characters), in the row and again in each index that leads
-- with them: about half of a ledger row's bytes, a seventh of an equity point's. As bytea they
-- take 20 and 32 bytes.
--
-- Nothing the API serves changes: rows are served as '0x' || encode(…, 'hex'), which gives back the
-- stored lowercase text, and bytea orders as that text did (fixed length, '0'-'9' before 'a'-'f'),
-- so the events page order, its cursors and the re-fold order are the same.
alter table ledger
  alter column vault type bytea using decode(substr(vault, 3), 'hex'),
  alter column tx_hash type bytea using decode(substr(tx_hash, 3), 'hex'),
  alter column block_hash type bytea using decode(substr(block_hash, 3), 'hex');
alter table equity_points
  alter column vault type bytea using decode(substr(vault, 3), 'hex');
