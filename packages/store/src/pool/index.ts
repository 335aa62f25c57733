import pg from 'pg';

export { type ArrayElement, pgArray, pgArrayOf } from './array.js';
export { bytesToHex, copyHex, hexToBytes } from './hex.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export interface PgPoolConfig {
  url: string;
  /** Projection schema put first on the search_path; store SQL never qualifies table names. */
  schema?: string;
  applicationName: string;
  max?: number;
  /** `off` is safe for the projector: offsets commit with the rows, a lost tail is re-read. */
  synchronousCommit?: 'on' | 'off';
  statementTimeoutMs?: number;
  /** A session idle inside a transaction longer than this is ended by Postgres (its locks freed). */
  idleInTransactionTimeoutMs?: number;
  /** How long acquiring a new connection may take before the query fails. */
  connectionTimeoutMs?: number;
  /**
   * Client-side bound on a query's answer: past it the query fails and its connection is dropped.
   * A statement timeout is Postgres's and needs Postgres to answer; this one holds when nothing does
   * (a server frozen, or gone without closing the connection: a failover behind a dead host).
   */
  queryTimeoutMs?: number;
  /**
   * `session` (default: a direct connection, or PgBouncer in session mode): search_path,
   * synchronous_commit and statement_timeout are sent with each connection's start-up options.
   * `transaction` (PgBouncer pool_mode=transaction): a server connection serves many clients, so
   * nothing is set per session — the role's own settings give search_path and statement_timeout
   * (`alter role … in database … set`, see `checkRoleSettings`) — and queries are never named
   * (a named prepared statement lives on one server connection only).
   */
  pooling?: Pooling;
}

/** How the connections of a URL are pooled between it and Postgres. */
export type Pooling = 'session' | 'transaction';

/** A query's config without its statement name: run as the unnamed statement (transaction pooling). */
const unnamed = (q: unknown): unknown => {
  if (typeof q !== 'object' || q === null || !('name' in q)) return q;
  const { name: _name, ...rest } = q as { name?: unknown } & Record<string, unknown>;
  return rest;
};

// numeric → string (exact), int8 → string would be safer but every int8 we store fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function createPgPool(config: PgPoolConfig): Pool {
  const transaction = config.pooling === 'transaction';
  const settings: string[] = [];
  if (!transaction) {
    if (config.schema) settings.push(`-c search_path=${config.schema},public`);
    if (config.synchronousCommit) settings.push(`-c synchronous_commit=${config.synchronousCommit}`);
    if (config.statementTimeoutMs) settings.push(`-c statement_timeout=${config.statementTimeoutMs}`);
    if (config.idleInTransactionTimeoutMs)
      settings.push(`-c idle_in_transaction_session_timeout=${config.idleInTransactionTimeoutMs}`);
  }
  const pool = new pg.Pool({
    connectionString: config.url,
    application_name: config.applicationName,
    max: config.max ?? 10,
    connectionTimeoutMillis: config.connectionTimeoutMs,
    ...(config.queryTimeoutMs ? { query_timeout: config.queryTimeoutMs } : {}),
    options: settings.length > 0 ? settings.join(' ') : undefined,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  // Nor a checked-out one (between two queries of a transaction, Postgres restarting): without a
  // listener its 'error' event kills the process; with one, its next query fails and the caller's
  // retry takes a fresh connection (withTransaction discards a client whose transaction failed).
  pool.on('connect', (client) => {
    client.on('error', () => {});
    if (transaction) {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      // Same behaviour, the statement name dropped (pg's overloads are kept by the cast).
      client.query = ((q: unknown, ...rest: unknown[]) => query(unnamed(q), ...rest)) as typeof client.query;
    }
  });
  return pool;
}

/** What a pool's role must have set when nothing can be set per session (transaction pooling). */
export interface RoleSettingsExpected {
  /** The schema first on the search_path. */
  schema?: string;
  statementTimeoutMs?: number;
}

/**
 * Checks, on one connection of `pool`, that the role's settings give what `createPgPool` would
 * have set at connect: the schema first on the search_path, the statement timeout. Throws one
 * line naming the `alter role … in database … set` that fixes it. Run at start with
 * `pooling: 'transaction'`.
 */
export async function checkRoleSettings(pool: Pool, expected: RoleSettingsExpected): Promise<void> {
  const { rows } = await pool.query<{ role: string; db: string; path: string; ms: string }>(
    `select current_user as role, current_database() as db, current_setting('search_path') as path,
            (select setting from pg_settings where name = 'statement_timeout') as ms`,
  );
  const row = rows[0];
  if (!row) return;
  const fixes: string[] = [];
  const now: string[] = [];
  const first = row.path.split(',')[0]?.trim().replace(/^"|"$/g, '');
  if (expected.schema && first !== expected.schema) {
    fixes.push(`set search_path = ${expected.schema}, public`);
    now.push(`search_path is ${row.path}`);
  }
  if (expected.statementTimeoutMs !== undefined && Number(row.ms) !== expected.statementTimeoutMs) {
    fixes.push(`set statement_timeout = ${expected.statementTimeoutMs}`);
    now.push(`statement_timeout is ${row.ms} ms`);
  }
  if (fixes.length === 0) return;
  const sql = fixes.map((f) => `alter role ${row.role} in database ${row.db} ${f};`).join(' ');
  throw new Error(
    `DATABASE_POOLING=transaction sets nothing per connection, so the role's settings must: ${now.join(', ')}; run as an admin: ${sql}`,
  );
}

/** Quotes an identifier that has already been validated as `[a-z_][a-z0-9_]*`. */
export function ident(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid SQL identifier: ${name}`);
  return `"${name}"`;
}

/**
 * Runs `fn` in one transaction on one client: commits when it resolves, rolls back when it
 * throws. A client whose transaction failed is discarded rather than reused (it may be broken).
 */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  begin = 'begin',
): Promise<T> {
  const client = await pool.connect();
  let failed = false;
  try {
    await client.query(begin);
    const out = await fn(client);
    await client.query('commit');
    return out;
  } catch (err) {
    failed = true;
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    client.release(failed);
  }
}
