import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import pg from 'pg';

export interface ProjectDatabase {
  /** Superuser/admin URL the setup used. */
  adminUrl: string;
  database: string;
  /** Writer role URL: indexer, projector, migrations. */
  writerUrl: string;
  /** Read-only role URL: the reader. */
  readerUrl: string;
}

export const ROLES = { writer: 'vault_yield_writer', reader: 'vault_yield_reader' } as const;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

async function answers(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Starts the machine's own cluster (Debian's pg_ctlcluster) when the URL points at loopback. */
function startLocalCluster(): void {
  const versions = readdirSync('/etc/postgresql');
  for (const version of versions) {
    execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start'], {
      stdio: 'ignore',
    });
  }
}

/**
 * Makes sure a Postgres answers at `adminUrl` (starting the local cluster if it is on loopback and
 * down), then throws a clear error if it still doesn't.
 */
export async function ensurePostgres(adminUrl: string): Promise<void> {
  let error = await answers(adminUrl);
  if (error === null) return;
  const host = new URL(adminUrl).hostname;
  if (LOOPBACK.has(host)) {
    try {
      startLocalCluster();
    } catch (e) {
      error = `${error}; starting the local cluster failed: ${(e as Error).message}`;
    }
    for (let i = 0; i < 20 && (await answers(adminUrl)) !== null; i++)
      await new Promise((r) => setTimeout(r, 500));
    error = await answers(adminUrl);
    if (error === null) return;
  }
  throw new Error(
    `Postgres does not answer at ${redact(adminUrl)}: ${error}. Set DATABASE_URL to a reachable server, or start the local one with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`,
  );
}

export function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

function withDb(url: string, database: string, user?: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  if (user) {
    u.username = user;
    u.password = '';
  }
  return u.toString();
}

/** Creates the two roles once per cluster (idempotent; safe under concurrent callers). */
export async function ensureRoles(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`select pg_advisory_lock(hashtext('vault-yield-roles'))`);
    for (const role of Object.values(ROLES)) {
      const { rowCount } = await client.query('select 1 from pg_roles where rolname = $1', [role]);
      if (!rowCount) await client.query(`create role ${role} login`);
    }
    // The reader can never write, whatever grants a table gets later.
    await client.query(`alter role ${ROLES.reader} set default_transaction_read_only = on`);
  } finally {
    await client.query(`select pg_advisory_unlock(hashtext('vault-yield-roles'))`).catch(() => {});
    await client.end();
  }
}

/**
 * Creates `database` owned by the writer role (if missing) with the roles above, and returns the
 * URLs for each role. The reader gets CONNECT only; schemas grant it SELECT when migrated.
 */
export async function ensureProjectDatabase(adminUrl: string, database: string): Promise<ProjectDatabase> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database)) throw new Error(`invalid database name: ${database}`);
  await ensurePostgres(adminUrl);
  await ensureRoles(adminUrl);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) {
      try {
        await client.query(`create database ${database} owner ${ROLES.writer}`);
      } catch (e) {
        // Another process created it first.
        if ((e as { code?: string }).code !== '42P04') throw e;
      }
    }
    await client.query(`revoke all on database ${database} from public`);
    await client.query(`grant connect on database ${database} to ${ROLES.reader}`);
    await client.query(`grant all on database ${database} to ${ROLES.writer}`);
  } finally {
    await client.end();
  }
  return {
    adminUrl,
    database,
    writerUrl: withDb(adminUrl, database, ROLES.writer),
    readerUrl: withDb(adminUrl, database, ROLES.reader),
  };
}

/** Drops a database (tests clean up after themselves). */
export async function dropDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists ${database} with (force)`);
  } finally {
    await client.end();
  }
}
