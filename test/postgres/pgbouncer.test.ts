import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@vault-yield/common';
import { ROLES } from '@vault-yield/devstack/postgres';
import { createReader, type Reader, readerConfig } from '@vault-yield/reader';
import { createPgPool, migrate } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checksums,
  createTopic,
  deleteTopics,
  projector,
  publish,
  VAULT_TABLES,
} from '../projector/support.js';
import { expectNoDdl } from './support.js';

/**
 * The services behind PgBouncer in transaction mode (Debian's `pgbouncer`, its own process on a
 * free loopback port, pool_mode=transaction): a server connection serves whichever client has a
 * transaction, so nothing may rest on session state. Projector and reader run with
 * DATABASE_POOLING=transaction — no start-up options, no named statements, the roles' own
 * search_path/statement_timeout — and the reader's LISTEN goes straight to Postgres. The roles
 * are split: the migrator migrated, the writer (DML only) projects, the reader reads.
 */
const BINARY = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
});
if (!BINARY)
  console.warn(
    '[pgbouncer] skipped: no pgbouncer binary (apt-get install -y pgbouncer; .ci/run installs it)',
  );

const silent = createLogger({ name: 'pgbouncer-test', level: 'silent' });
const DIRECT = 'direct';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Starts pgbouncer for `database` on 127.0.0.1:5432 in transaction mode; resolves once it answers. */
async function startBouncer(
  database: string,
): Promise<{ port: number; stop(): Promise<void>; log(): string }> {
  const dir = mkdtempSync(join(tmpdir(), 'vy-pgbouncer-'));
  chmodSync(dir, 0o777); // pgbouncer refuses root: it runs as postgres (-u) and writes its log here
  const port = await freePort();
  const users = Object.values(ROLES)
    .map((r) => `"${r}" ""`)
    .join('\n');
  writeFileSync(join(dir, 'users.txt'), `${users}\n`, { mode: 0o644 });
  const ini = [
    '[databases]',
    `${database} = host=127.0.0.1 port=5432 dbname=${database}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'users.txt')}`,
    'pool_mode = transaction',
    'default_pool_size = 3',
    'max_client_conn = 200',
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    'admin_users = postgres',
  ].join('\n');
  writeFileSync(join(dir, 'pgbouncer.ini'), `${ini}\n`, { mode: 0o644 });
  const args =
    process.getuid?.() === 0 ? ['-u', 'postgres', join(dir, 'pgbouncer.ini')] : [join(dir, 'pgbouncer.ini')];
  const child: ChildProcess = spawn(BINARY as string, args, { stdio: 'ignore' });
  const log = () => {
    try {
      return readFileSync(join(dir, 'pgbouncer.log'), 'utf8');
    } catch {
      return '';
    }
  };
  const url = `postgres://${ROLES.reader}@127.0.0.1:${port}/${database}`;
  for (let i = 0; ; i++) {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await c.connect();
      await c.query('select 1');
      await c.end();
      break;
    } catch (err) {
      await c.end().catch(() => {});
      if (i >= 40 || child.exitCode !== null)
        throw new Error(`pgbouncer did not answer on ${port}: ${(err as Error).message}\n${log()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return {
    port,
    log,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const via = (url: string, port: number) => {
  const u = new URL(url);
  u.port = String(port);
  return u.toString();
};

describe.skipIf(!BINARY)('behind PgBouncer in transaction mode', () => {
  let db: TestDatabase;
  let bouncer: Awaited<ReturnType<typeof startBouncer>> | undefined;
  const readers: Reader[] = [];
  const brokers = kafkaBrokers();
  const topic = uniqueTopic('pgbouncer');
  const gen = createHistoryGenerator({ vaults: 12, seed: 23 });
  const records = gen.take(1_500);

  beforeAll(async () => {
    db = await createTestDatabase('pgbouncer', {
      split: true,
      roleSettings: { schema: 'vault_yield', readerStatementTimeoutMs: 5000 },
    });
    // A second projection of the same log, straight to Postgres, to compare with.
    const m = createPgPool({ url: db.migratorUrl, applicationName: 'pgbouncer-migrate', max: 1 });
    try {
      await migrate(m, DIRECT, ROLES.reader, { writerRole: ROLES.writer });
    } finally {
      await m.end();
    }
    bouncer = await startBouncer(db.database);
    await createTopic(brokers, topic);
    await publish(brokers, topic, records);
  }, 120_000);

  afterAll(async () => {
    for (const r of readers) await r.stop().catch(() => {});
    await bouncer?.stop();
    await deleteTopics();
    await db?.drop();
  });

  it('the writer has DML only: no DDL in the projection schema, no schema of its own, nothing in public', async () => {
    const w = new pg.Client({ connectionString: db.writerUrl });
    await w.connect();
    try {
      await expectNoDdl(w);
      // DML on what the migrator created, including through default privileges.
      await w.query('select count(*) from vault_yield.consumer_offsets');
    } finally {
      await w.end();
    }
  });

  it('projector and reader project and serve the log through it, as a direct projection does', async () => {
    const port = bouncer?.port ?? 0;
    const pooled = projector({
      brokers,
      url: via(db.writerUrl, port),
      schema: db.schema,
      topic,
      group: 'pgbouncer',
      pooling: 'transaction',
      concurrency: 2,
      pgPoolMax: 4,
    });
    const direct = projector({ brokers, url: db.writerUrl, schema: DIRECT, topic, group: 'direct' });
    await Promise.all([pooled.start(), direct.start()]);
    try {
      await Promise.all([pooled.caughtUp({ timeoutMs: 120_000 }), direct.caughtUp({ timeoutMs: 120_000 })]);
    } finally {
      await Promise.all([pooled.stop(), direct.stop()]);
    }
    const viaBouncer = await checksums(db.writerUrl, db.schema, VAULT_TABLES);
    expect(viaBouncer.vault_snapshot?.rows).toBe(gen.vaults().filter((v) => v.created).length);
    expect(viaBouncer.ledger?.rows).toBeGreaterThan(0);
    expect(viaBouncer).toEqual(await checksums(db.writerUrl, DIRECT, VAULT_TABLES));

    // The reader: pooled queries through PgBouncer (unnamed statements), LISTEN straight to Postgres.
    const reader = createReader(
      readerConfig(via(db.readerUrl, port), {
        schema: db.schema,
        port: 0,
        pooling: 'transaction',
        directUrl: db.readerUrl,
        rateLimit: { ratePerSecond: 0, burst: 1, trustedProxies: { kind: 'none' } },
        concurrency: { perClient: 0, queue: 0 },
        logger: silent,
      }),
    );
    readers.push(reader);
    const { url } = await reader.start();
    const vaults = gen.vaults().filter((v) => v.created);
    // More requests than server connections, each statement kind more than once: a named
    // statement prepared on one server connection would be missing on the next.
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        vaults.flatMap((v) => [
          fetch(`${url}/v1/vault/${v.vault}/snapshot`),
          fetch(`${url}/v1/vault/${v.vault}/events?limit=5`),
          fetch(`${url}/v1/vault/${v.vault}/equity?points=10`),
        ]),
      );
      for (const a of answers) expect(a.status, await a.clone().text()).toBe(200);
    }
    const snap = (await (await fetch(`${url}/v1/vault/${vaults[0]?.vault}/snapshot`)).json()) as {
      vault: string;
    };
    expect(snap.vault).toBe(vaults[0]?.vault.toLowerCase());
    const list = (await (await fetch(`${url}/v1/vaults?limit=100`)).json()) as { vaults?: unknown[] };
    expect(JSON.stringify(list)).toContain(vaults[0]?.vault.toLowerCase());
    expect(reader.hub).toBeDefined();
    // No session state was asked of PgBouncer (it would have refused `options`).
    expect(bouncer?.log() ?? '').not.toMatch(/unsupported startup parameter|prepared statement/i);
  }, 240_000);

  it('a role whose settings do not give the schema is refused at start, with the fix', async () => {
    const reader = createReader(
      readerConfig(via(db.readerUrl, bouncer?.port ?? 0), {
        schema: DIRECT,
        port: 0,
        pooling: 'transaction',
        directUrl: db.readerUrl,
        logger: silent,
      }),
    );
    readers.push(reader);
    await expect(reader.start()).rejects.toThrow(
      `alter role ${ROLES.reader} in database ${db.database} set search_path = ${DIRECT}, public;`,
    );
  });
});
