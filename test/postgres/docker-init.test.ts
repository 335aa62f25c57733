import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ROLES } from '@vault-yield/devstack/postgres';
import { createPgPool, migrate } from '@vault-yield/store';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OwnPostgres, startOwnPostgres } from '../faults/support.js';

/**
 * docker-compose.yml's init step (infra/postgres/docker-init/10-roles.sh), run the way the
 * postgres image runs it — psql as the superuser against POSTGRES_DB — on a cluster of this test's
 * own: the roles it makes let the writer migrate and the reader read, and nothing more.
 */
const script = fileURLToPath(new URL('../../infra/postgres/docker-init/10-roles.sh', import.meta.url));
const run = promisify(execFile);
// Compose's init keeps the two-role layout (the writer migrates); the migrator is postgres:setup's.
const COMPOSE_ROLES = [ROLES.writer, ROLES.reader];

describe('docker-compose roles init step', () => {
  let pgc: OwnPostgres;
  beforeAll(async () => {
    pgc = await startOwnPostgres();
    const admin = new pg.Client({ connectionString: pgc.adminUrl });
    await admin.connect();
    await admin.query('create database vault_yield');
    await admin.end();
  }, 120_000);
  afterAll(async () => {
    await pgc?.destroy();
  });

  const url = (role: string) => `postgres://${role}@127.0.0.1:${pgc.port}/vault_yield`;
  const initEnv = () => ({
    ...process.env,
    POSTGRES_USER: 'postgres',
    POSTGRES_DB: 'vault_yield',
    PGHOST: '127.0.0.1',
    PGPORT: String(pgc.port),
    VAULT_YIELD_WRITER_PASSWORD: 'w-secret',
    VAULT_YIELD_READER_PASSWORD: "r'secret",
  });

  it('creates the roles (twice is fine), the writer migrates, the reader only reads', async () => {
    await run('sh', [script], { env: initEnv() });
    await run('sh', [script], { env: initEnv() }); // a re-run (or pre-existing roles) is harmless

    const writer = createPgPool({ url: url(ROLES.writer), applicationName: 'init-test', max: 1 });
    try {
      await migrate(writer, 'vault_yield', ROLES.reader);
      await writer.query(`insert into vault_yield.strategies (id, name, updated_at) values ('s', 'S', 0)`);
    } finally {
      await writer.end();
    }
    const reader = new pg.Client({ connectionString: url(ROLES.reader) });
    await reader.connect();
    try {
      const { rows } = await reader.query('select id from vault_yield.strategies');
      expect(rows).toEqual([{ id: 's' }]);
      await expect(reader.query(`delete from vault_yield.strategies`)).rejects.toThrow(
        /read-only|permission/,
      );
      await expect(reader.query('create table public.x (a int)')).rejects.toThrow(/read-only|permission/);
    } finally {
      await reader.end();
    }
    const admin = new pg.Client({ connectionString: pgc.adminUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        `select rolname, rolsuper, rolcreaterole, rolcreatedb, rolpassword is not null as has_password
           from pg_authid where rolname = any($1) order by rolname`,
        [COMPOSE_ROLES],
      );
      expect(rows).toEqual(
        [...COMPOSE_ROLES].sort().map((rolname) => ({
          rolname,
          rolsuper: false,
          rolcreaterole: false,
          rolcreatedb: false,
          has_password: true,
        })),
      );
      const owner = await admin.query(
        `select pg_get_userbyid(datdba) as owner from pg_database where datname = 'vault_yield'`,
      );
      expect(owner.rows[0]?.owner).toBe(ROLES.writer);
    } finally {
      await admin.end();
    }
  });

  it('refuses to run without the passwords, naming the missing one', async () => {
    const env = { ...initEnv(), VAULT_YIELD_READER_PASSWORD: '' };
    await expect(run('sh', [script], { env })).rejects.toThrow(/VAULT_YIELD_READER_PASSWORD/);
  });
});
