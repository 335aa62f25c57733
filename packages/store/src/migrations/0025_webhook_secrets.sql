-- Webhook signing secrets apart from the endpoints (issue #42 item 3): a table of their own that
-- only its owner (the migrator) and the webhooks role (vault_yield_webhooks: the deliverer, the
-- operators' `webhooks` CLI) may touch. Every privilege another role holds on the webhook tables —
-- the reader's and the writer's, from default privileges or a blanket grant — is revoked by
-- migrate() after this file and after every grant it makes (lockWebhookTables,
-- packages/store/src/webhooks), whatever options it is run with.
--
-- The secrets move as they are: a migration knows no application key. The deliverer and the CLI
-- seal each plaintext one (AES-256-GCM, `v1:<keyId>:…`) the first time they run with
-- WEBHOOK_SECRET_KEY; `webhooks list` and `status` say how many are still plaintext.
create table webhook_secrets (
  endpoint_id  bigint primary key references webhook_endpoints (id) on delete cascade,
  -- v1:<keyId>:<nonce>:<ciphertext>:<tag> (base64url), or a whsec_… from before encryption
  secret       text not null
);
revoke all on webhook_secrets from public;
insert into webhook_secrets (endpoint_id, secret) select id, secret from webhook_endpoints;
alter table webhook_endpoints drop column secret;
