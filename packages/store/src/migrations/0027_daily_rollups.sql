-- Strategy stats from daily rollups (#49): what realised returns need per vault per UTC day, kept
-- by the stats refresh as days complete, so a refresh reads the days that changed and one row per
-- strategy and day, never every equity point kept. Derived: empty tables (a new schema, an
-- upgraded one) fill at the next refresh from the points, without a re-fold.

-- A vault's daily return cells: the day's chained return under a strategy and its weight (the
-- value at the start of the day, or of its first sub-period). One row per vault, day, strategy.
create table vault_days (
  vault      bytea not null,
  day        int not null,
  strategy   text not null,
  r          float8 not null,
  weight_usd float8 not null,
  primary key (vault, day, strategy)
);
create index vault_days_day on vault_days (day);

-- Where a vault's rollup stands: days before next_day are rolled up; the last point before
-- next_day's start is carried (the next day's first sub-period starts from it, and its value
-- weighs the quiet days after it), with its place in the fold order (ts, seq): the next refresh
-- reads from there, and a point found between it and next_day (folded after its day was rolled:
-- a vault released from a gap) rolls the vault again. first_day: the day of its first point.
create table vault_days_carry (
  vault           bytea primary key,
  first_day       int not null,
  next_day        int not null,
  ts              bigint not null,
  seq             bigint not null,
  value_usd       float8 not null,
  capital_in_usd  float8 not null,
  capital_out_usd float8 not null,
  strategy        text not null,
  return_index    float8 not null
);

-- A strategy's daily return: its members' returns of the day weighted by their start values.
create table strategy_days (
  strategy   text not null,
  day        int not null,
  r          float8 not null,
  weight_usd float8 not null,
  primary key (strategy, day)
);

-- Vaults whose points were deleted (a re-fold after a revert or a dead-letter retry rewrites them):
-- their rollup is redone from the earliest day touched at the next refresh.
create table vault_days_stale (
  vault   bytea primary key,
  from_ts bigint not null
);

create function vy_equity_points_deleted() returns trigger language plpgsql
set search_path from current as $$
begin
  insert into vault_days_stale (vault, from_ts)
    select vault, min(ts) from gone group by vault
  on conflict (vault) do update set from_ts = least(vault_days_stale.from_ts, excluded.from_ts);
  return null;
end $$;

-- One statement-level trigger: a delete (rare: re-folds) notes its vaults once; inserts, the
-- fold's hot path, fire nothing.
create trigger equity_points_deleted after delete on equity_points
  referencing old table as gone for each statement execute function vy_equity_points_deleted();
