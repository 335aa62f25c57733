// npm run postgres:setup — make sure Postgres answers and the project database and roles exist.
import { ensureProjectDatabase, redact } from './index.js';

const adminUrl = process.env.DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const database = process.env.DATABASE_NAME ?? 'vault_yield';
const db = await ensureProjectDatabase(adminUrl, database);
console.log(
  JSON.stringify({ database: db.database, writerUrl: redact(db.writerUrl), readerUrl: redact(db.readerUrl) }),
);
