import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { VaultRecord } from '@vault-yield/domain';
import type { Projector } from '@vault-yield/projector';
import type { Reader } from '@vault-yield/reader';
import {
  compareSchemas,
  createPgPool,
  getBuild,
  liveSchema,
  type Pool,
  schemaExists,
} from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { startReader } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli/run.js';
import { createTopic, deleteTopics, projector, publish } from '../projector/support.js';
import { caughtUp } from './support.js';

/**
 * `vault-yield rebuild --follow` and `--retire-old` on a real Kafka and Postgres, with a live
 * projector on the initial schema and an in-process reader on the views schema:
 * - --follow keeps folding records published after the switch into the new schema (the reader
 *   serves them) until SIGTERM, then exits 0;
 * - --retire-old drops retired schemas past the grace period only once the switch is done (a dry
 *   run retires nothing, the default grace keeps a fresh one), while the reader keeps serving.
 */
const VIEWS = 'vault_yield_api';
const bin = fileURLToPath(new URL('../../services/cli/bin/vault-yield.js', import.meta.url));

describe('vault-yield rebuild --follow / --retire-old', () => {
  let db: TestDatabase;
  let pool: Pool;
  let live: Projector;
  let reader: Reader;
  let baseUrl: string;
  let env: Record<string, string>;
  const topic = uniqueTopic('vault-records');
  const gen = createHistoryGenerator({ vaults: 12, seed: 21 });
  const published: VaultRecord[] = [];
  /** Vaults that appear only after the --follow switch. */
  const later = createHistoryGenerator({ vaults: 4, seed: 22 });
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('follow_retire');
    pool = createPgPool({ url: db.writerUrl, applicationName: 'follow-test', max: 2 });
    await createTopic(kafkaBrokers(), topic, 3);
    published.push(...gen.take(600));
    await publish(kafkaBrokers(), topic, published);
    live = projector({ brokers: kafkaBrokers(), url: db.writerUrl, schema: db.schema, topic, group: 'live' });
    await live.start();
    await live.caughtUp({ timeoutMs: 60_000 });
    env = cliEnv(
      db,
      { topic, views: VIEWS },
      {
        // No strategy topics here (names no other file uses): the builds fold the vault topic only.
        SCREEN_TOPIC: uniqueTopic('screen-none'),
        CATALOGUE_TOPIC: uniqueTopic('catalogue-none'),
      },
    );
    const sw = await runCli(['rebuild', 'switch', '--schema', db.schema], env);
    expect(sw.code, sw.stderr).toBe(0);
    ({ reader, url: baseUrl } = await startReader(db, { schema: VIEWS }));
  }, 120_000);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await reader?.stop();
    await live?.stop();
    await pool?.end();
    await deleteTopics();
    await db?.drop();
  });

  it('--follow keeps folding records published after the switch, until SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [bin, 'rebuild', '--follow', '--schema', 'vault_yield_f1', '--group', 'follow-f1'],
      { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let stdout = '';
    let stderr = '';
    const following = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => {
        stderr += d;
        if (/following .* into vault_yield_f1/.test(stderr)) resolve();
      });
      child.on('exit', (code) => reject(new Error(`rebuild exited (${code}) before following:\n${stderr}`)));
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await following;
    expect(stdout).toMatch(/switched vault_yield_api → vault_yield_f1 \(was vault_yield\)/);
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_f1');

    // New vaults after the switch: the follower folds them into f1, the reader serves them.
    const newVault = later.vaults()[0]!.vault.toLowerCase();
    expect((await fetch(`${baseUrl}/v1/vault/${newVault}/snapshot`)).status).toBe(404);
    const after = [...later.take(150), ...gen.take(50)];
    published.push(...after);
    await publish(kafkaBrokers(), topic, after);
    await caughtUp(pool, 'vault_yield_f1', 'follow-f1', topic);
    const res = await fetch(`${baseUrl}/v1/vault/${newVault}/snapshot`);
    expect(res.status).toBe(200);
    // The followed schema equals the live projector's, which folded the same records.
    await live.caughtUp({ timeoutMs: 60_000 });
    const diffs = await compareSchemas(pool, db.schema, 'vault_yield_f1');
    expect(diffs.filter((d) => !d.equal)).toEqual([]);
    // Sequenced marks have no ledger rows.
    expect(diffs.find((d) => d.table === 'ledger')?.left?.rows).toBe(
      published.filter((r) => r.type !== 'mark').length,
    );

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).not.toMatch(/error|fatal/i);
    expect(await getBuild(pool, VIEWS, 'vault_yield_f1')).toMatchObject({
      state: 'live',
      groupId: 'follow-f1',
    });
  }, 150_000);

  it('--retire-old drops old schemas only after the switch, past the grace period; the reader keeps serving', async () => {
    // f1 → r2: f1 is retired (no follower writes to it any more).
    const r2 = await runCli(['rebuild', '--schema', 'vault_yield_r2', '--group', 'rebuild-r2'], env, 120_000);
    expect(r2.code, r2.stderr).toBe(0);
    expect(await getBuild(pool, VIEWS, 'vault_yield_f1')).toMatchObject({ state: 'retired' });

    // A dry run never switches, so it never retires either.
    const dry = await runCli(
      [
        'rebuild',
        '--dry-run',
        '--retire-old',
        '--grace',
        '0',
        '--schema',
        'vault_yield_d3',
        '--group',
        'rebuild-d3',
      ],
      env,
      120_000,
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/dry run: not switched/);
    expect(dry.stdout).not.toMatch(/retire:/);
    expect(await schemaExists(pool, 'vault_yield_f1')).toBe(true);

    // The default grace (1h) keeps what was retired a moment ago.
    const r3 = await runCli(
      ['rebuild', '--retire-old', '--schema', 'vault_yield_r3', '--group', 'rebuild-r3'],
      env,
      120_000,
    );
    expect(r3.code, r3.stderr).toBe(0);
    expect(r3.stdout).toMatch(/retire: vault_yield_f1: kept \(within the grace period/);
    expect(r3.stdout).toMatch(/retire: vault_yield_r2: kept \(within the grace period/);
    expect(r3.stdout).toMatch(/retire: vault_yield_r3: kept \(live\)/);
    expect(await schemaExists(pool, 'vault_yield_f1')).toBe(true);

    // Grace 0 and no quiet period (nothing writes to the old builds any more: each build process
    // has exited; retire-quiet.test.ts covers a projector still writing), under steady reader
    // load: switch to r4, then drop f1, r2 and r3 (live until this switch); keep the initial
    // schema (the live projector's) and the unswitched dry run.
    const vault = gen.vaults()[2]!.vault.toLowerCase();
    const before = await (await fetch(`${baseUrl}/v1/vault/${vault}/snapshot`)).json();
    const paths = [`/v1/vault/${vault}/snapshot`, `/v1/vault/${vault}/events`, '/v1/vaults', '/ready'];
    const failures: string[] = [];
    let ok = 0;
    let running = true;
    const worker = async (w: number) => {
      for (let i = w; running; i++) {
        const path = paths[i % paths.length]!;
        try {
          const res = await fetch(`${baseUrl}${path}`);
          await res.arrayBuffer();
          if (res.status === 200) ok++;
          else failures.push(`${path}: ${res.status}`);
        } catch (err) {
          failures.push(`${path}: ${(err as Error).message}`);
        }
      }
    };
    const load = [0, 1].map(worker);
    const r4 = await runCli(
      [
        'rebuild',
        '--retire-old',
        '--grace',
        '0',
        '--quiet-for',
        '0',
        '--schema',
        'vault_yield_r4',
        '--group',
        'rebuild-r4',
      ],
      env,
      120_000,
    );
    // A few more requests once the old schemas are gone.
    for (const path of paths) {
      const res = await fetch(`${baseUrl}${path}`);
      await res.arrayBuffer();
      if (res.status !== 200) failures.push(`after: ${path}: ${res.status}`);
    }
    running = false;
    await Promise.all(load);

    expect(r4.code, r4.stderr).toBe(0);
    const lines = r4.stdout.split('\n');
    const switched = lines.findIndex((l) =>
      /switched vault_yield_api → vault_yield_r4 \(was vault_yield_r3\)/.test(l),
    );
    const dropped = (s: string) => lines.findIndex((l) => l.startsWith(`retire: ${s}: dropped`));
    expect(switched).toBeGreaterThanOrEqual(0);
    for (const s of ['vault_yield_f1', 'vault_yield_r2', 'vault_yield_r3']) {
      expect(dropped(s), s).toBeGreaterThan(switched);
      expect(await schemaExists(pool, s), s).toBe(false);
      expect(await getBuild(pool, VIEWS, s), s).toMatchObject({ state: 'dropped' });
    }
    expect(r4.stdout).toMatch(/retire: vault_yield: kept \(schema predates the rebuilds/);
    expect(r4.stdout).toMatch(/retire: vault_yield_d3: kept \(state ready: not retired/);
    expect(r4.stdout).toMatch(/retire: vault_yield_r4: kept \(live\)/);
    for (const s of [db.schema, 'vault_yield_d3', 'vault_yield_r4'])
      expect(await schemaExists(pool, s), s).toBe(true);

    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(10);
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_r4');
    expect(await (await fetch(`${baseUrl}/v1/vault/${vault}/snapshot`)).json()).toEqual(before);
  }, 400_000);
});
