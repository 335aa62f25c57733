import pg from 'pg';

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
  return pool;
}

/** Quotes an identifier that has already been validated as `[a-z_][a-z0-9_]*`. */
export function ident(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid SQL identifier: ${name}`);
  return `"${name}"`;
}
