import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import pg from 'pg';

export interface ProjectDatabase {
  /** Superuser/admin URL the setup used. */
  adminUrl: string;
  database: string;
  /**
   * Writer role URL: indexer, projector (DML; with `split: false` also migrations, the layout
   * before the migrator role).
   */
  writerUrl: string;
  /** Migrator role URL: migrate, rebuild, reindex (owner of the database and its schemas). */
  migratorUrl: string;
  /** Read-only role URL: the reader. */
  readerUrl: string;
  /**
   * Callbacks role URL: the webhooks deliverer and the operators' `webhooks` CLI — the only role,
   * with the migrator, that may read or write the webhook tables (endpoints and their secrets).
   */
  webhooksUrl: string;
  /** The admin's URL in this database (what only an admin may do in it: drop what another role owns). */
  adminDbUrl: string;
}

export const ROLES = {
  migrator: 'vault_yield_migrator',
  writer: 'vault_yield_writer',
  reader: 'vault_yield_reader',
  /**
   * The deliverer (`vault-yield webhooks run`) and the operators' `webhooks` CLI: the webhook
   * tables are its own (migrate grants them to it and revokes them from every other role but the
   * owner: packages/store WEBHOOKS_ROLE, the same name). A member of the writer for the rest (the
   * live schema's ledger, which schema is live), which in turn is never granted the webhook tables.
   */
  webhooks: 'vault_yield_webhooks',
} as const;

/** What ensureProjectDatabase sets up besides the database itself. */
export interface ProjectDatabaseOptions {
  /**
   * The migrator owns the database and runs every DDL; the writer gets CONNECT and TEMPORARY
   * only (DML comes from `migrate`'s grants). `false` (the default, for databases made before the
   * migrator role): the writer owns the database and may migrate too.
   */
  split?: boolean;
  /**
   * Role settings in this database, for connections that can set nothing themselves (PgBouncer in
   * transaction mode): the writer's search_path first on `schema`, the reader's on `readerSchema`
   * (default `schema`) with `readerStatementTimeoutMs`.
   */
  roleSettings?: { schema: string; readerSchema?: string; readerStatementTimeoutMs?: number };
}

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

/** Creates the roles (migrator, writer, reader, webhooks) once per cluster (idempotent; safe under concurrent callers). */
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
    // Only the migrator may own what it creates; it never needs to create roles or databases.
    await client.query(`alter role ${ROLES.migrator} nocreaterole nocreatedb`);
    // The deliverer reads what the writer reads (the live ledger, vy_live) and, alone, the webhook
    // tables; the writer is not a member of it, so nothing the writer runs reads a secret.
    await client.query(`grant ${ROLES.writer} to ${ROLES.webhooks}`);
  } finally {
    await client.query(`select pg_advisory_unlock(hashtext('vault-yield-roles'))`).catch(() => {});
    await client.end();
  }
}

/**
 * Creates `database` owned by the writer role (if missing) with the roles above, and returns the
 * URLs for each role. The reader gets CONNECT only; schemas grant it SELECT when migrated.
 */
export async function ensureProjectDatabase(
  adminUrl: string,
  database: string,
  options: ProjectDatabaseOptions = {},
): Promise<ProjectDatabase> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database)) throw new Error(`invalid database name: ${database}`);
  const ident = /^[a-z_][a-z0-9_]{0,62}$/;
  const rs = options.roleSettings;
  for (const s of [rs?.schema, rs?.readerSchema])
    if (s !== undefined && !ident.test(s)) throw new Error(`invalid schema name: ${s}`);
  const owner = options.split ? ROLES.migrator : ROLES.writer;
  await ensurePostgres(adminUrl);
  await ensureRoles(adminUrl);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) {
      try {
        await client.query(`create database ${database} owner ${owner}`);
      } catch (e) {
        // Another process created it first.
        if ((e as { code?: string }).code !== '42P04') throw e;
      }
    }
    await client.query(`revoke all on database ${database} from public`);
    await client.query(`grant connect on database ${database} to ${ROLES.reader}`);
    await client.query(`grant connect on database ${database} to ${ROLES.webhooks}`);
    if (options.split) {
      await client.query(`alter database ${database} owner to ${ROLES.migrator}`);
      await client.query(`grant all on database ${database} to ${ROLES.migrator}`);
      // DML only: no schema of its own (CREATE on the database), no DDL in the migrator's schemas.
      await client.query(`revoke all on database ${database} from ${ROLES.writer}`);
      await client.query(`grant connect, temporary on database ${database} to ${ROLES.writer}`);
    } else {
      await client.query(`grant all on database ${database} to ${ROLES.writer}`);
      await client.query(`grant connect on database ${database} to ${ROLES.migrator}`);
    }
    if (rs) {
      const readerSchema = rs.readerSchema ?? rs.schema;
      await client.query(
        `alter role ${ROLES.writer} in database ${database} set search_path = ${rs.schema}, public`,
      );
      await client.query(
        `alter role ${ROLES.migrator} in database ${database} set search_path = ${rs.schema}, public`,
      );
      await client.query(
        `alter role ${ROLES.reader} in database ${database} set search_path = ${readerSchema}, public`,
      );
      if (rs.readerStatementTimeoutMs !== undefined)
        await client.query(
          `alter role ${ROLES.reader} in database ${database} set statement_timeout = ${Math.trunc(rs.readerStatementTimeoutMs)}`,
        );
    }
  } finally {
    await client.end();
  }
  // Nobody but the public schema's owner creates objects in it (Postgres 15's default; older
  // clusters and restored dumps grant CREATE to PUBLIC).
  const inDb = new pg.Client({ connectionString: withDb(adminUrl, database) });
  await inDb.connect();
  try {
    await inDb.query('revoke create on schema public from public');
  } finally {
    await inDb.end();
  }
  return {
    adminUrl,
    database,
    writerUrl: withDb(adminUrl, database, ROLES.writer),
    migratorUrl: withDb(adminUrl, database, ROLES.migrator),
    readerUrl: withDb(adminUrl, database, ROLES.reader),
    webhooksUrl: withDb(adminUrl, database, ROLES.webhooks),
    adminDbUrl: withDb(adminUrl, database),
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
