import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@vault-yield/common';
import {
  type AnvilInstance,
  type DemoResult,
  deployReferenceStack,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
} from '@vault-yield/devstack/chain';
import { ROLES } from '@vault-yield/devstack/postgres';
import { activityTypes, type VaultRecord } from '@vault-yield/domain';
import { createIndexer, type IndexerConfig } from '@vault-yield/indexer';
import { createReader, type Reader, readerConfig } from '@vault-yield/reader';
import { createPgPool, indexerCheckpoints, migrate } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { byVault, silent as indexerLog, normalized, readTopic } from '@vault-yield/test-kit/indexer';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run.js';
import {
  checksums,
  createTopic,
  deleteTopics,
  projector,
  publish,
  VAULT_TABLES,
} from '../projector/support.js';
import { type Receiver, rowOf, startDeliverer, startReceiver, waitFor } from '../webhooks/support.js';
import { expectNoDdl } from './support.js';

/**
 * The services behind PgBouncer in transaction mode (Debian's `pgbouncer`, its own process on a
 * free loopback port, pool_mode=transaction): a server connection serves whichever client has a
 * transaction, so nothing may rest on session state. Indexer, projector, reader and the webhooks
 * deliverer run with DATABASE_POOLING=transaction — no start-up options, no named statements,
 * the roles' own search_path/statement_timeout — and what holds a session (the reader's LISTEN,
 * the deliverer's lock and LISTEN) goes straight to Postgres. The roles are split: the migrator
 * migrated, the writer (DML only) indexes, projects and delivers, the reader reads.
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

  /** The projector of the log into the test's schema, through PgBouncer (group `pgbouncer`). */
  const pooledProjector = (extra: { concurrency?: number; pgPoolMax?: number } = {}) =>
    projector({
      brokers,
      url: via(db.writerUrl, bouncer?.port ?? 0),
      schema: db.schema,
      topic,
      group: 'pgbouncer',
      pooling: 'transaction',
      ...extra,
    });

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
    const pooled = pooledProjector({ concurrency: 2, pgPoolMax: 4 });
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
  it('the indexer indexes a chain through it: the records and checkpoint of a direct indexer', async () => {
    const anvil: AnvilInstance = await startAnvil();
    try {
      const stack: ReferenceStack = await deployReferenceStack(anvil.rpcUrl);
      const demo: DemoResult = await playDemoScenario(stack);
      const end = Number(demo.toBlock);
      const pooledTopic = uniqueTopic('pgbouncer-idx');
      const directTopic = uniqueTopic('pgbouncer-idx-direct');
      const config = (
        url: string,
        schema: string,
        topic: string,
        extra: Partial<IndexerConfig>,
      ): IndexerConfig => ({
        rpcUrl: anvil.rpcUrl,
        factory: stack.factory,
        kafka: { brokers, topic, partitions: 3 },
        databaseUrl: url,
        schema,
        pollIntervalMs: 50,
        maxBlockRange: 8,
        concurrency: 2,
        endBlock: end,
        logger: indexerLog,
        ...extra,
      });
      const run = async (c: IndexerConfig) => {
        const indexer = createIndexer(c);
        await indexer.start();
        try {
          await indexer.done;
        } finally {
          await indexer.stop();
        }
      };
      await run(
        config(via(db.writerUrl, bouncer?.port ?? 0), db.schema, pooledTopic, { pooling: 'transaction' }),
      );
      await run(config(db.writerUrl, DIRECT, directTopic, {}));
      const perVault = (rs: readonly VaultRecord[]) =>
        new Map([...byVault(rs)].map(([v, list]) => [v, list.map(normalized)]));
      const pooled = (await readTopic(brokers, pooledTopic)).map((t) => t.record);
      expect(pooled.filter((r) => r.type !== 'mark').length).toBeGreaterThan(10);
      expect(perVault(pooled)).toEqual(
        perVault((await readTopic(brokers, directTopic)).map((t) => t.record)),
      );
      const w = createPgPool({ url: db.writerUrl, applicationName: 'pgbouncer-check', max: 1 });
      try {
        const [pooledCp, directCp] = [
          await indexerCheckpoints(w, db.schema),
          await indexerCheckpoints(w, DIRECT),
        ];
        expect(pooledCp.map((c) => c.blockNumber)).toEqual([end]);
        const at = (cps: typeof pooledCp) => cps.map((c) => [c.blockNumber, c.blockHash]);
        expect(at(pooledCp)).toEqual(at(directCp));
      } finally {
        await w.end();
      }
      expect(bouncer?.log() ?? '').not.toMatch(/unsupported startup parameter|prepared statement/i);
    } finally {
      await anvil.stop();
    }
  }, 240_000);

  it('the webhooks CLI and deliverer work through it (lock and LISTEN straight to Postgres)', async () => {
    const port = bouncer?.port ?? 0;
    const env: Record<string, string> = {
      // The webhook tables are the webhooks role's alone (with the migrator's).
      DATABASE_URL: via(db.webhooksUrl, port),
      DATABASE_POOLING: 'transaction',
      DATABASE_DIRECT_URL: db.webhooksUrl,
      WEBHOOK_SECRET_KEY: Buffer.alloc(32, 5).toString('base64'),
      PROJECTION_SCHEMA: db.schema,
      VIEWS_SCHEMA: 'pgbouncer_no_views',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
    };
    // Without a direct URL the deliverer is refused in one line: its lock needs a session.
    const refused = await runCli(['webhooks', 'run'], { ...env, DATABASE_DIRECT_URL: '' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/DATABASE_DIRECT_URL: required with DATABASE_POOLING=transaction/);

    const receiver: Receiver = await startReceiver();
    // `add` runs plain statements: the pooler alone serves it (no direct URL).
    const added = await runCli(['webhooks', 'add', receiver.url, '--all', '--json'], {
      ...env,
      DATABASE_DIRECT_URL: '',
    });
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const deliverer = startDeliverer(env);
    try {
      await waitFor('the deliverer to run', () =>
        deliverer.logs.some((l) => l.includes('webhook deliverer running')),
      );
      // New rows enter the ledger through the pooled projector: each is delivered.
      const more = gen.take(300);
      await publish(brokers, topic, more);
      const pooled = pooledProjector();
      await pooled.start();
      try {
        await pooled.caughtUp({ timeoutMs: 120_000 });
      } finally {
        await pooled.stop();
      }
      const r = new pg.Client({ connectionString: db.writerUrl });
      await r.connect();
      let expected: string[];
      try {
        const keys = new Set(more.map((x) => `${x.txHash}:${x.logIndex}`));
        const { rows } = await r.query<{ tx: string; log: number }>(
          `select '0x' || encode(tx_hash, 'hex') as tx, log_index as log from ${db.schema}.ledger where type = any($1)`,
          [activityTypes],
        );
        expected = rows.filter((x) => keys.has(`${x.tx}:${x.log}`)).map((x) => `${x.tx}:${x.log}`);
      } finally {
        await r.end();
      }
      expect(expected.length).toBeGreaterThan(10);
      const delivered = () =>
        new Set(
          receiver.received
            .filter((x) => x.status === 200)
            .map((x) => `${rowOf(x).txHash}:${rowOf(x).logIndex}`),
        );
      await waitFor(`${expected.length} deliveries`, () => expected.every((k) => delivered().has(k)), 60_000);
      // Only the new rows: nothing of the ledger before the endpoint was added.
      expect([...delivered()].every((k) => expected.includes(k))).toBe(true);
      expect(deliverer.logs.join('\n')).not.toMatch(/prepared statement|"level":(50|60)/);
    } finally {
      deliverer.child.kill('SIGTERM');
      await deliverer.exited;
      await receiver.close();
    }
    expect(bouncer?.log() ?? '').not.toMatch(/unsupported startup parameter|prepared statement/i);
  }, 240_000);
});
