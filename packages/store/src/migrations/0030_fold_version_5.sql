-- Fold version 5 (packages/domain FOLD_VERSION): the LP figures (issue #46) — the vault against
-- holding what was put in, trading fees and rewards earned, fee and reward APR, the attribution of
-- netUsd, divergence loss, time in range, rebalances, drawdown, PnL in token terms (the snapshot's
-- `lp`, each position's `timeInRange`: in the snapshot and state JSON, no column) and the holding
-- value at every equity point (hold_usd: the benchmark basket at the point's prices, USD, the
-- precision of value_usd). A point written before has none (null), nor does one folded after the
-- upgrade from a state folded before: those figures cannot be known from the middle of a vault's
-- history. A projection that already holds equity points keeps the version it was folded by until
-- `vault-yield rebuild` re-folds the log into a fresh schema (migrated empty: 5).
alter table equity_points add column hold_usd numeric;
update fold_meta set fold_version = 5 where not exists (select 1 from equity_points);
