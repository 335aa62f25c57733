-- Live streams (#28 item 1): the projector's commits, in commit order, so a reader's server-sent
-- events resume from a cursor without a gap or a duplicate (services/reader/src/stream).
--
-- 1. One row per vault-projection transaction that touched vaults: its number (the stream
--    cursor), its transaction id and the vaults it touched. The projector takes a transaction
--    advisory lock just before inserting it (packages/store/src/projection/tx.ts, noteCommit), so
--    the lock is held to the commit and numbers are committed in order: a reader that sees
--    commit n sees every commit below n (a rolled-back number is a hole, never a late arrival).
create table stream_commits (
  seq        bigint generated always as identity primary key,
  xid        xid8 not null default pg_current_xact_id(),
  vaults     text[] not null,
  at         timestamptz not null default now()
);

-- 2. Which transaction wrote each ledger row: the stream reads a commit's rows by its xid. Added
--    without a default first (no rewrite of the rows already there: they stay null, before any
--    stream), then the default for the rows written from now on.
alter table ledger add column commit_xid xid8;
alter table ledger alter column commit_xid set default pg_current_xact_id();
create index ledger_commit_xid on ledger (commit_xid) where commit_xid is not null;
