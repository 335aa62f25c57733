#!/bin/sh
# The project's roles, for the postgres image's first start (docker-compose.yml mounts this into
# /docker-entrypoint-initdb.d): the same roles and grants as infra/postgres (ensureRoles,
# ensureProjectDatabase), with passwords, since the image authenticates network logins.
# The services never connect as the superuser: migrate, indexer and projector as the writer
# (owner of the database), the reader as a role that can only read.
set -eu
: "${VAULT_YIELD_WRITER_PASSWORD:?set VAULT_YIELD_WRITER_PASSWORD}"
: "${VAULT_YIELD_READER_PASSWORD:?set VAULT_YIELD_READER_PASSWORD}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v db="$POSTGRES_DB" -v writer_pw="$VAULT_YIELD_WRITER_PASSWORD" -v reader_pw="$VAULT_YIELD_READER_PASSWORD" <<'SQL'
select 'create role vault_yield_writer login'
 where not exists (select 1 from pg_roles where rolname = 'vault_yield_writer') \gexec
select 'create role vault_yield_reader login'
 where not exists (select 1 from pg_roles where rolname = 'vault_yield_reader') \gexec
alter role vault_yield_writer password :'writer_pw';
alter role vault_yield_reader password :'reader_pw';
-- The reader can never write, whatever grants a table gets later.
alter role vault_yield_reader set default_transaction_read_only = on;
alter database :"db" owner to vault_yield_writer;
revoke all on database :"db" from public;
grant connect on database :"db" to vault_yield_reader;
grant all on database :"db" to vault_yield_writer;
-- The public schema is not the projection's: nobody but its owner creates objects there.
revoke create on schema public from public;
SQL
