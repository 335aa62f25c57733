-- The LP figures per strategy (issue #46 item 8; GET /v1/strategies `lp`): over the strategy's
-- member vaults, realised only, written by the stats refresh in the statement that writes
-- live_apr and sigma (store strategy/stats.ts writeStrategyStats; packages/domain stats/lp.ts
-- strategyLpFigures). Sums of every vault's LP figures credited to the strategy while it was in
-- force (its stored state's lp.byStrategy: a vault folded before fold version 5 has none and
-- adds nothing), over time-weighted capital or time:
--   lp_fee_apr, lp_reward_apr, lp_divergence_apr: Σ fees / rewards / realised divergence (USD)
--     · 365 days / Σ ∫ value dt — fractions a year (divergence negative: a loss against holding);
--   lp_time_in_range: Σ block time with every open position in range / Σ block time open;
--   lp_rebalances_per_week: Σ rebalances · 7 days / Σ funded block time;
--   lp_max_drawdown: the largest fall of the strategy's chained daily returns (those of live_apr).
-- Each null while live_apr is null (too little history: the same rule) and where its denominator
-- is empty; 6 decimals. Functions of the log alone, like live_apr: compared by verify. Rows of an
-- upgraded schema hold nulls until the next refresh.
alter table strategies
  add column lp_fee_apr double precision,
  add column lp_reward_apr double precision,
  add column lp_time_in_range double precision check (lp_time_in_range between 0 and 1),
  add column lp_rebalances_per_week double precision check (lp_rebalances_per_week >= 0),
  add column lp_divergence_apr double precision,
  add column lp_max_drawdown double precision check (lp_max_drawdown between 0 and 1),
  add constraint strategies_lp_with_live_apr check (
    live_apr is not null
    or num_nonnulls(lp_fee_apr, lp_reward_apr, lp_time_in_range, lp_rebalances_per_week,
                    lp_divergence_apr, lp_max_drawdown) = 0
  );
