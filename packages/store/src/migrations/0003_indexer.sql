-- Indexer bookkeeping (additive: 0001's indexer tables keep their columns).

-- Which vaults had a record published (any type, marks included) in each kept block: after a
-- reorg, these are the vaults that get a revert record. Rows above the checkpoint are written
-- before their batch is published (write-ahead), so a crash never forgets a published block.
alter table indexer_blocks
  add column block_timestamp bigint not null default 0,
  add column vaults text[] not null default '{}';

-- The vault registry: what the indexer needs to value a vault (its tokens and pool) and the
-- per-vault mark state (open position ranges, in-range flags, last valued block), saved with
-- the checkpoint in one transaction so a restart resumes with exactly the state it stopped at.
alter table indexer_vaults
  add column token0 text not null default '',
  add column token1 text not null default '',
  add column pool text not null default '',
  add column reward_token text not null default '',
  add column state jsonb not null default '{}'::jsonb;

-- Logs the indexer could not decode. The indexer halts at such a log (it never publishes past
-- it); the row tells the operator where and why.
create table indexer_bad_logs (
  chain_id      integer not null,
  block_number  bigint not null,
  block_hash    text not null,
  tx_hash       text not null,
  log_index     integer not null,
  address       text not null,
  topic0        text,
  reason        text not null,
  log           jsonb not null,
  first_seen    timestamptz not null default now(),
  last_seen     timestamptz not null default now(),
  primary key (chain_id, block_hash, log_index)
);
