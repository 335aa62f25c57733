import { randomBytes } from 'node:crypto';
import { dropDatabase, ensureProjectDatabase, ROLES } from '@vault-yield/devstack/postgres';
import { createPgPool, migrate } from '@vault-yield/store';
import { inject } from 'vitest';

/** Brokers resolved by the global setup (env → testcontainers → local runner). */
export const kafkaBrokers = (): string[] => inject('kafkaBrokers').split(',');
export const kafkaDescription = (): string => inject('kafkaDescription');
export const postgresAdminUrl = (): string => inject('postgresAdminUrl');

/** A topic name no other test file uses. */
export function uniqueTopic(base: string): string {
  return `${base}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

/**
 * `work`, or a rejection naming `label` once `ms` pass: a long setup whose hook times out says
 * which of its steps never finished, not only that the hook did.
 */
export async function step<T>(label: string, work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`setup step "${label}" did not finish in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

export const TEST_SCHEMA = 'vault_yield';

export interface TestDatabase {
  database: string;
  /** Writer-role URL (indexer, projector). */
  writerUrl: string;
  /** Read-only-role URL (reader). */
  readerUrl: string;
  /** Webhooks-role URL (deliverer, `webhooks` CLI): with the migrator, the only one granted the webhook tables. */
  webhooksUrl: string;
  /** Migrator-role URL: owner of the schemas with `split` (else the writer may migrate too). */
  migratorUrl: string;
  /** Projection schema, already migrated. */
  schema: string;
  drop: () => Promise<void>;
}

export interface TestDatabaseOptions {
  /**
   * The production layout: the migrator owns the database and migrates (granting DML to the
   * writer, SELECT to the reader); the writer cannot create, alter or drop. Default false: the
   * writer owns the database (tests that migrate or rebuild as the writer).
   */
  split?: boolean;
  /** Role settings in the database (search_path, the reader's statement_timeout): see ensureProjectDatabase. */
  roleSettings?: { schema: string; readerSchema?: string; readerStatementTimeoutMs?: number };
}

/**
 * A fresh database for one test file, with the project's roles and the migrations applied to
 * `schema`, so files run in parallel without sharing rows.
 */
export async function createTestDatabase(
  label = 'test',
  options: TestDatabaseOptions = {},
): Promise<TestDatabase> {
  const adminUrl = postgresAdminUrl();
  const slug = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30);
  const database = `t_${slug}_${randomBytes(4).toString('hex')}`;
  return migratedDatabase(adminUrl, database, options, () => dropDatabase(adminUrl, database));
}

/**
 * `database` on the cluster of `adminUrl` with the project's roles and the migrations applied to
 * TEST_SCHEMA (by the migrator with `split`, else by the writer): what createTestDatabase makes,
 * on any cluster (test/faults starts its own).
 */
export async function migratedDatabase(
  adminUrl: string,
  database: string,
  options: TestDatabaseOptions,
  drop: () => Promise<void>,
): Promise<TestDatabase> {
  const db = await ensureProjectDatabase(adminUrl, database, options);
  const pool = createPgPool({
    url: options.split ? db.migratorUrl : db.writerUrl,
    applicationName: 'test-migrate',
    max: 1,
  });
  try {
    await migrate(pool, TEST_SCHEMA, ROLES.reader, options.split ? { writerRole: ROLES.writer } : {});
  } finally {
    await pool.end();
  }
  return {
    database,
    writerUrl: db.writerUrl,
    readerUrl: db.readerUrl,
    webhooksUrl: db.webhooksUrl,
    migratorUrl: db.migratorUrl,
    schema: TEST_SCHEMA,
    drop,
  };
}

/**
 * Starts two parts side by side. Unlike Promise.all, a part that started is never lost when the
 * other fails: `keep` receives each one that did (the caller's afterAll stops it), then the first
 * failure is thrown. (A dashboard run without chromium leaked the dev stack's anvil that way.)
 */
export async function startBoth<A, B>(
  a: Promise<A>,
  b: Promise<B>,
  keep: (a: A | undefined, b: B | undefined) => void,
): Promise<void> {
  const [x, y] = await Promise.allSettled([a, b]);
  keep(x.status === 'fulfilled' ? x.value : undefined, y.status === 'fulfilled' ? y.value : undefined);
  if (x.status === 'rejected') throw x.reason;
  if (y.status === 'rejected') throw y.reason;
}
