-- Live streams retract what a revert removed (#28): the ids of the ledger rows a commit's reverts
-- deleted (packages/store/src/projection/tx.ts, deleteOrphaned → noteCommit), so a stream that
-- sent them says so (`retract` event) instead of leaving an orphaned block's rows on a dashboard.
-- Null for a commit that removed nothing.
alter table stream_commits add column retracted text[];
