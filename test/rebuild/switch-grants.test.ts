import { ROLES } from '@vault-yield/devstack/postgres';
import type { Projector } from '@vault-yield/projector';
import { createPgPool, liveSchema, type Pool } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { startReader, type TestReader } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, cliEnv, runCli } from '../cli/run.js';
import { createTopic, deleteTopics, projector, publish } from '../projector/support.js';

/**
 * A switch never takes the reader down (#48 item 1), on a real Kafka and Postgres in the deployed
 * layout (migrator switches, writer projects, read-only reader on the views): `rebuild` and
 * `rebuild switch` run WITHOUT READER_ROLE (nor WRITER_ROLE), as the README's commands are typed,
 * while the reader serves every vault; not one read fails, the stream hub still reads
 * `stream_commits`, `/ready` answers 200, and the writer may write the new schema. Before, the
 * switch re-created the views granted to READER_ROLE only: every read answered 500 from then on.
 */
const VIEWS = 'vault_yield_api';

describe('a switch keeps the readers of the views', () => {
  let db: TestDatabase;
  let pool: Pool;
  let readerPool: Pool;
  let live: Projector;
  let reader: TestReader;
  /** The operator's environment: no READER_ROLE, no WRITER_ROLE. */
  let bare: Record<string, string>;
  let vaults: string[];
  const topic = uniqueTopic('switch-grants');
  const gen = createHistoryGenerator({ vaults: 12, seed: 61 });

  beforeAll(async () => {
    db = await createTestDatabase('switch_grants', { split: true });
    pool = createPgPool({ url: db.migratorUrl, applicationName: 'switch-grants-test', max: 2 });
    readerPool = createPgPool({ url: db.readerUrl, applicationName: 'switch-grants-reader', max: 1 });
    await createTopic(kafkaBrokers(), topic, 3);
    await publish(kafkaBrokers(), topic, gen.take(600));
    const env = cliEnv(
      db,
      { topic, views: VIEWS },
      {
        SCREEN_TOPIC: uniqueTopic('screen-none'),
        CATALOGUE_TOPIC: uniqueTopic('catalogue-none'),
        MIGRATE_DATABASE_URL: db.migratorUrl,
      },
    );
    const { READER_ROLE: _reader, ...rest } = env;
    bare = rest;
    // The views' bootstrap (compose's `views` service) names the reader once.
    const sw = await runCli(['rebuild', 'switch', '--schema', db.schema], {
      ...env,
      WRITER_ROLE: ROLES.writer,
    });
    expect(sw.code, sw.stderr).toBe(0);
    live = projector({ brokers: kafkaBrokers(), url: db.writerUrl, schema: db.schema, topic, group: 'live' });
    await live.start();
    await live.caughtUp({ timeoutMs: 60_000 });
    reader = await startReader(db, { schema: VIEWS });
    vaults = gen.vaults().map((v) => v.vault.toLowerCase());
    for (const v of vaults) expect((await reader.get(`/v1/vault/${v}/snapshot`)).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await reader?.stop();
    await live?.stop();
    await readerPool?.end();
    await pool?.end();
    await deleteTopics();
    await db?.drop();
  });

  /** Every vault's routes, the list, a live stream's opening (the hub reads stream_commits) and /ready. */
  const paths = () => [
    ...vaults.flatMap((v) => [`/v1/vault/${v}/snapshot`, `/v1/vault/${v}/events`]),
    '/v1/vaults',
    `/v1/vault/${vaults[0]}/stream`,
    '/ready',
  ];

  /** One read: its failure as a line, or null. A stream is opened, its status read, and closed. */
  const read = async (path: string): Promise<string | null> => {
    const ac = new AbortController();
    try {
      const res = await fetch(`${reader.url}${path}`, { signal: ac.signal });
      const body = path.endsWith('/stream') ? '' : await res.text();
      return res.status === 200 ? null : `${path}: ${res.status} ${body.slice(0, 200)}`;
    } catch (err) {
      return `${path}: ${(err as Error).message}`;
    } finally {
      ac.abort();
    }
  };

  /**
   * Runs `command` while two clients read every path in turn, then reads every path once more
   * (all after the switch); returns the command's result, the reads and the failed ones.
   */
  const underReads = async (command: () => Promise<CliResult>) => {
    let reads = 0;
    const failures: string[] = [];
    let running = true;
    const client = async (offset: number) => {
      const all = paths();
      for (let i = offset; running; i++) {
        const f = await read(all[i % all.length]!);
        reads++;
        if (f) failures.push(f);
      }
    };
    const clients = [client(0), client(7)];
    const result = await command().finally(() => {
      running = false;
    });
    await Promise.all(clients);
    for (const path of paths()) {
      const f = await read(path);
      reads++;
      if (f) failures.push(f);
    }
    return { result, reads, failures };
  };

  /** What the reader role reads through every view, straight from Postgres: the views it cannot read. */
  const unreadableViews = async (): Promise<string[]> => {
    const { rows } = await pool.query<{ name: string }>(
      `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = $1 and c.relkind = 'v' order by 1`,
      [VIEWS],
    );
    const denied: string[] = [];
    for (const { name } of rows) {
      try {
        await readerPool.query(`select 1 from ${VIEWS}.${name} limit 1`);
      } catch (err) {
        denied.push(`${name}: ${(err as Error).message}`);
      }
    }
    expect(rows.map((r) => r.name)).toContain('stream_commits');
    return denied;
  };

  it('rebuild without READER_ROLE: not one read fails, and the new schema is readable and writable', async () => {
    const { result, reads, failures } = await underReads(() =>
      runCli(['rebuild', '--schema', 'vault_yield_sg1', '--group', 'rebuild-sg1'], bare, 150_000),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_sg1');
    expect(failures).toEqual([]);
    expect(reads).toBeGreaterThan(paths().length);
    expect(result.stdout).toMatch(
      /^granted: readers vault_yield_reader \(select on the views and vault_yield_sg1\); writers vault_yield_writer \(DML on vault_yield_sg1\)$/m,
    );
    expect(result.stdout).toMatch(
      /^next: projectors with FOLLOW_LIVE=true .* move to vault_yield_sg1 by themselves/m,
    );
    expect(await unreadableViews()).toEqual([]);
    expect((await reader.get('/ready')).status).toBe(200);
    // The writer that projects the live schema may write the new one (a follower moves there).
    const { rows } = await pool.query<{ ok: boolean }>(
      `select has_table_privilege($1, 'vault_yield_sg1.consumer_offsets', 'insert') as ok`,
      [ROLES.writer],
    );
    expect(rows[0]?.ok).toBe(true);
    // The endpoints' signing secrets stay out of the reader's reach on the new schema.
    const secret = await pool.query<{ ok: boolean }>(
      `select has_table_privilege($1, 'vault_yield_sg1.webhook_endpoints', 'select') as ok`,
      [ROLES.reader],
    );
    expect(secret.rows[0]?.ok).toBe(false);
  }, 200_000);

  it('rebuild switch without READER_ROLE: not one read fails', async () => {
    const { result, failures } = await underReads(() =>
      runCli(['rebuild', 'switch', '--schema', db.schema], bare),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(await liveSchema(pool, VIEWS)).toBe(db.schema);
    expect(failures).toEqual([]);
    expect(result.stdout).toMatch(/^granted: readers vault_yield_reader /m);
    expect(await unreadableViews()).toEqual([]);
    expect((await reader.get('/ready')).status).toBe(200);
  }, 120_000);
});
