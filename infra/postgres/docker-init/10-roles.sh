#!/bin/sh
# The project's roles, for the postgres image's first start (docker-compose.yml mounts this into
# /docker-entrypoint-initdb.d): the same roles and grants as infra/postgres (ensureRoles,
# ensureProjectDatabase with `split`), with passwords, since the image authenticates network logins.
# The services never connect as the superuser: migrate and the views bootstrap (and an operator's
# rebuild / reindex) as the migrator, which owns the database and everything it creates; indexer,
# projector as the writer, with DML only (migrate grants it on the tables); the webhooks deliverer
# as vault_yield_webhooks, the only role besides the migrator granted the webhook tables (their
# signing secrets; a member of the writer for the rest); the reader as a role that can only read.
# Idempotent, and an upgrade: run again on a database of the two-role layout (the writer owned it)
# — `docker compose exec postgres sh /docker-entrypoint-initdb.d/10-roles.sh` — it hands the
# writer's objects to the migrator; the next `migrate` (WRITER_ROLE) grants the writer its DML.
set -eu
: "${VAULT_YIELD_MIGRATOR_PASSWORD:?set VAULT_YIELD_MIGRATOR_PASSWORD}"
: "${VAULT_YIELD_WRITER_PASSWORD:?set VAULT_YIELD_WRITER_PASSWORD}"
: "${VAULT_YIELD_READER_PASSWORD:?set VAULT_YIELD_READER_PASSWORD}"
: "${VAULT_YIELD_WEBHOOKS_PASSWORD:?set VAULT_YIELD_WEBHOOKS_PASSWORD}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v db="$POSTGRES_DB" -v migrator_pw="$VAULT_YIELD_MIGRATOR_PASSWORD" \
  -v writer_pw="$VAULT_YIELD_WRITER_PASSWORD" -v reader_pw="$VAULT_YIELD_READER_PASSWORD" \
  -v webhooks_pw="$VAULT_YIELD_WEBHOOKS_PASSWORD" <<'SQL'
select 'create role vault_yield_migrator login'
 where not exists (select 1 from pg_roles where rolname = 'vault_yield_migrator') \gexec
select 'create role vault_yield_writer login'
 where not exists (select 1 from pg_roles where rolname = 'vault_yield_writer') \gexec
select 'create role vault_yield_reader login'
 where not exists (select 1 from pg_roles where rolname = 'vault_yield_reader') \gexec
alter role vault_yield_migrator password :'migrator_pw';
alter role vault_yield_writer password :'writer_pw';
select 'create role vault_yield_webhooks login'
 where not exists (select 1 from pg_roles where rolname = 'vault_yield_webhooks') \gexec
alter role vault_yield_reader password :'reader_pw';
alter role vault_yield_webhooks password :'webhooks_pw';
-- The deliverer reads what the writer reads; the webhook tables are granted it alone (migrate).
grant vault_yield_writer to vault_yield_webhooks;
-- Only the migrator owns what it creates; it never needs to create roles or databases.
alter role vault_yield_migrator nocreaterole nocreatedb;
-- The reader can never write, whatever grants a table gets later.
alter role vault_yield_reader set default_transaction_read_only = on;
alter database :"db" owner to vault_yield_migrator;
-- A database of the two-role layout: what the writer created becomes the migrator's.
reassign owned by vault_yield_writer to vault_yield_migrator;
revoke all on database :"db" from public;
grant all on database :"db" to vault_yield_migrator;
-- DML only: no schema of its own (CREATE on the database), no DDL in the migrator's schemas.
revoke all on database :"db" from vault_yield_writer;
grant connect, temporary on database :"db" to vault_yield_writer;
grant connect on database :"db" to vault_yield_reader;
grant connect on database :"db" to vault_yield_webhooks;
-- The public schema is not the projection's: nobody but its owner creates objects there.
revoke create on schema public from public;
SQL
