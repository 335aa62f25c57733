// npm run postgres:setup — make sure Postgres answers and the project database and roles exist:
// the migrator owns the database (migrate, rebuild, reindex), the writer has DML only, the reader
// reads; each role's search_path (and the reader's statement_timeout) is set in the database, so
// the services also work behind PgBouncer in transaction mode.
import { ensureProjectDatabase, redact } from './index.js';

const adminUrl = process.env.DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const database = process.env.DATABASE_NAME ?? 'vault_yield';
const schema = process.env.PROJECTION_SCHEMA ?? 'vault_yield';
const db = await ensureProjectDatabase(adminUrl, database, {
  split: true,
  roleSettings: {
    schema,
    readerSchema: process.env.VIEWS_SCHEMA ?? 'vault_yield_api',
    readerStatementTimeoutMs: 5000,
  },
});
console.log(
  JSON.stringify({
    database: db.database,
    migratorUrl: redact(db.migratorUrl),
    writerUrl: redact(db.writerUrl),
    readerUrl: redact(db.readerUrl),
  }),
);
