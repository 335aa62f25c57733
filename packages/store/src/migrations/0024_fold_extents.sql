-- How far each vault was folded (issue #43 item 2): a vault's daily returns count up to how far
-- THAT vault was folded, not up to the projection's latest record — a vault of a partition that
-- lags (a catch-up, a rebuild with uneven partitions) or held at a gap had its unfolded days
-- counted as quiet days (zero returns) of its strategy.
-- 1. Per partition of a consumer group: the block time (Unix ms) of the last record folded in it,
--    written with the partition's offset in the batch's transaction (null: none yet, or none
--    since this migration; the strategy side's partitions fold no vault and keep null).
alter table consumer_offsets add column folded_to bigint;
-- 2. Per vault: the topic and partition its records are folded from (null until its next batch).
alter table vault_snapshot
  add column log_topic text,
  add column log_partition integer;
