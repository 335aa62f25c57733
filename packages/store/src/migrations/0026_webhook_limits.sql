-- The callback queue's bounds (issue #42 item 5; packages/store/src/webhooks/limits.ts):
-- an endpoint answering `410 Gone` (or disabled by an operator) is disabled: its cursor stops, its
-- pending rows are parked, until `vault-yield webhooks enable ID`. Parked rows are pruned after
-- WEBHOOK_PARKED_RETENTION_MS (by when they were parked: done_at).
alter table webhook_endpoints
  add column disabled_at     timestamptz,
  add column disabled_reason text;
create index webhook_deliveries_done on webhook_deliveries (state, done_at) where state <> 'pending';
