-- Strategy catalogue and eligible-asset universe (seed §2.6, §2.7). Written whole by the screen /
-- strategy projection in one transaction per screen run (rows replaced, screen_meta upserted), read
-- by the reader as they are. The ranking model is not stored: only its output order (`rank`).

-- The screen run whose output the universe tables and strategies.pairs currently hold: one row.
create table screen_meta (
  id           boolean primary key default true check (id),   -- singleton
  version      text not null,                                 -- screen run id (opaque, changes every run)
  screened_at  bigint not null,                               -- unix ms the screen ran
  updated_at   bigint not null                                -- unix ms the projection wrote it
);

-- One row per strategy of the catalogue. `id` matches vault_snapshot.strategy.
create table strategies (
  id             text primary key,
  name           text not null,
  description    text not null default '',                   -- display copy
  risk_note      text not null default '',                   -- display copy
  -- [{ "a": symbol, "b": symbol, "venues": [venue, …] }, …]: the pools the strategy would aim at
  -- now, from the live screen output; changes when the screen re-ranks.
  pairs          jsonb not null default '[]'::jsonb check (jsonb_typeof(pairs) = 'array'),
  -- Realised only (never a projection): time-weighted return of the strategy's vaults with flows
  -- removed, annualised, as a fraction (0.12 = 12 %/yr), and the annualised stdev of daily returns.
  -- Both null until history_days reaches the configured minimum.
  live_apr       double precision,
  sigma          double precision check (sigma is null or sigma >= 0),
  history_days   integer not null default 0 check (history_days >= 0),
  display_order  integer not null default 0,
  screen_version text,                                        -- screen run behind `pairs`
  updated_at     bigint not null,                             -- unix ms
  check ((live_apr is null) = (sigma is null))
);
create index strategies_order on strategies (display_order, id);

-- Assets that passed the screen (eligible for build-your-own strategies).
create table universe_assets (
  chain_id       integer not null,
  address        text not null check (address ~ '^0x[0-9a-f]{40}$'),
  symbol         text not null,
  name           text not null default '',
  category       text not null check (category in ('major', 'stable', 'stock token', 'meme')),
  decimals       integer not null check (decimals between 0 and 36),
  venues         text[] not null,                             -- venues with an eligible pool for it
  liquidity_usd  double precision not null check (liquidity_usd >= 0), -- USD of it held in those pools
  rank           integer not null,                            -- screen output order
  screen_version text not null,
  primary key (chain_id, address)
);
create index universe_assets_rank on universe_assets (rank, chain_id, address);

-- Pairs that passed the screen: one row per token pair, across venues (token_a < token_b).
create table universe_pairs (
  chain_id       integer not null,
  token_a        text not null check (token_a ~ '^0x[0-9a-f]{40}$'),
  token_b        text not null check (token_b ~ '^0x[0-9a-f]{40}$'),
  a              text not null,                               -- symbol of token_a
  b              text not null,                               -- symbol of token_b
  venues         text[] not null,
  tvl_usd        double precision not null check (tvl_usd >= 0), -- summed over the venues' pools
  emissions      boolean not null,                            -- any of the pools pays reward emissions
  rank           integer not null,
  screen_version text not null,
  primary key (chain_id, token_a, token_b),
  check (token_a < token_b)
);
create index universe_pairs_rank on universe_pairs (rank, chain_id, token_a, token_b);
