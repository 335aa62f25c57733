-- Fold version 4 (packages/domain FOLD_VERSION): no flow valued at a price that never was, and a
-- drain reads as a loss. A flow of a token whose feed never gave a valid price waits and is valued
-- at the token's first valid price (capital in / out, high water, benchmark basket; its ledger
-- row's USD is null, never 0); the owner's deposits and withdrawals are served apart from tokens
-- received from others and from balance changes no vault event explains; an unexplained outflow
-- is a loss (netUsd drops by it), not capital out. A projection that already holds equity points
-- keeps the version it was folded by until `vault-yield rebuild` re-folds the log into a fresh
-- schema (migrated empty: 4).
update fold_meta set fold_version = 4 where not exists (select 1 from equity_points);
