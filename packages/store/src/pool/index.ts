import pg from 'pg';

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
  /** How long acquiring a new connection may take before the query fails. */
  connectionTimeoutMs?: number;
}

// numeric → string (exact), int8 → string would be safer but every int8 we store fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function createPgPool(config: PgPoolConfig): Pool {
  const settings: string[] = [];
  if (config.schema) settings.push(`-c search_path=${config.schema},public`);
  if (config.synchronousCommit) settings.push(`-c synchronous_commit=${config.synchronousCommit}`);
  if (config.statementTimeoutMs) settings.push(`-c statement_timeout=${config.statementTimeoutMs}`);
  const pool = new pg.Pool({
    connectionString: config.url,
    application_name: config.applicationName,
    max: config.max ?? 10,
    connectionTimeoutMillis: config.connectionTimeoutMs,
    options: settings.length > 0 ? settings.join(' ') : undefined,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  // Nor a checked-out one (between two queries of a transaction, Postgres restarting): without a
  // listener its 'error' event kills the process; with one, its next query fails and the caller's
  // retry takes a fresh connection (withTransaction discards a client whose transaction failed).
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
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
