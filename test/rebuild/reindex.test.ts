import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@vault-yield/common';
import {
  type AnvilInstance,
  type DemoResult,
  deployReferenceStack,
  devChain,
  movePrice,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
} from '@vault-yield/devstack/chain';
import { ROLES } from '@vault-yield/devstack/postgres';
import { recordId, type VaultRecord } from '@vault-yield/domain';
import { createIndexer, type Indexer } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import type { Projector } from '@vault-yield/projector';
import type { Reader } from '@vault-yield/reader';
import {
  compareSchemas,
  createPgPool,
  getBuild,
  indexerCheckpoints,
  liveSchema,
  migrate,
  type Pool,
  schemaChecksums,
  storedOffsetRows,
} from '@vault-yield/store';
import {
  createTestDatabase,
  kafkaBrokers,
  step,
  type TestDatabase,
  uniqueTopic,
} from '@vault-yield/test-kit';
import { byVault, expectedRecords, normalized, readTopic } from '@vault-yield/test-kit/indexer';
import { startReader } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli/run.js';
import { projector } from '../projector/support.js';

/**
 * `vault-yield reindex` end to end on real parts: a live indexer follows a local chain while the
 * demo scenario plays (live topic, live checkpoint), a live projector folds it; then reindex
 * rebuilds the log from the factory's deployment block into a new topic (its own checkpoint
 * namespace, other partition count, other chunking) and the projection from that topic, and
 * switches the reader. The new log must hold the live log's records (identities, per-vault
 * order, payloads, contexts) and the chain's own (independent decode); the new projection must
 * equal the live one table by table.
 */
const VIEWS = 'vault_yield_api';
const bin = fileURLToPath(new URL('../../services/cli/bin/vault-yield.js', import.meta.url));
const MARK_INTERVAL = 3;

describe('vault-yield reindex', () => {
  /** What the live indexer warned of (a failed step is retried from the checkpoint: duplicates). */
  const liveWarnings: string[] = [];
  const liveLog = createLogger({
    name: 'reindex-live',
    level: 'warn',
    format: 'json',
    destination: { write: (line: string) => void liveWarnings.push(line) },
  });
  const liveTopic = uniqueTopic('vault-records');
  const newTopic = uniqueTopic('vault-records-v2');
  const killTopic = uniqueTopic('vault-records-v3');
  const headTopic = uniqueTopic('vault-records-v4');
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let demo: DemoResult;
  let db: TestDatabase;
  let pool: Pool;
  let indexer: Indexer;
  let live: Projector;
  let reader: Reader;
  let baseUrl: string;
  let env: Record<string, string>;
  let liveCheckpoint: number;
  /** The default checkpoint namespace of a topic (reindex's namespaceFor). */
  const nsOf = (topic: string) => `vault_yield_idx_${topic.replace(/[^a-z0-9]+/g, '_')}`.slice(0, 63);
  /**
   * A log's records without their republished copies. The log is at-least-once (DESIGN: a record's
   * identity is its id, duplicates are expected and harmless): a step that fails after its batch
   * was acknowledged — an RPC time-out on a loaded machine — is retried from the checkpoint and
   * publishes the batch again. Every copy must be byte for byte the first.
   */
  const firstsOf = <T extends { record: VaultRecord }>(rs: readonly T[], name: string): T[] => {
    const seen = new Map<string, string>();
    const firsts = rs.filter((r) => {
      const id = recordId(r.record);
      const text = normalized(r.record);
      const first = seen.get(id);
      if (first === undefined) {
        seen.set(id, text);
        return true;
      }
      expect(text, `${name}: a republished copy of ${id} differs from the first`).toBe(first);
      return false;
    });
    if (firsts.length < rs.length && name === 'live')
      console.info(
        `live log: ${rs.length - firsts.length} republished copies; the indexer warned:\n${liveWarnings.join('')}`,
      );
    return firsts;
  };
  /** The live log, once, without republished copies. */
  let liveFirsts: { record: VaultRecord; partition: number }[] | undefined;
  const liveLogRecords = async () =>
    (liveFirsts ??= firstsOf(await readTopic(kafkaBrokers(), liveTopic), 'live'));
  /**
   * The same records vault by vault, in the same order; on a difference, names the first block
   * where a vault's records part and prints both sides of that block whole (a cut diff hides it).
   */
  const expectSameLog = (got: { record: VaultRecord }[], want: { record: VaultRecord }[]) => {
    const a = byVault(got.map((r) => r.record));
    const b = byVault(want.map((r) => r.record));
    expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
    for (const [vault, list] of b) {
      const other = a.get(vault) ?? [];
      const at = list.findIndex((r, i) => other[i] === undefined || normalized(other[i]) !== normalized(r));
      if (at < 0 && other.length === list.length) continue;
      const block = (list[at] ?? other[list.length])!.blockNumber;
      const side = (rs: VaultRecord[]) =>
        rs
          .filter((r) => r.blockNumber === block)
          .map((r) => `  ${r.seq} ${normalized(r)}`)
          .join('\n');
      throw new Error(
        `vault ${vault} parts at record ${at < 0 ? list.length : at}, block ${block}:\n` +
          `got:\n${side(other)}\nwant (live):\n${side(list)}`,
      );
    }
  };

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    db = await createTestDatabase('reindex');
    pool = createPgPool({ url: db.writerUrl, applicationName: 'reindex-test', max: 2 });
    // The live indexer follows the head while the scenario plays (a few blocks per step).
    indexer = createIndexer({
      rpcUrl: anvil.rpcUrl,
      factory: stack.factory,
      kafka: { brokers: kafkaBrokers(), topic: liveTopic, partitions: 4 },
      databaseUrl: db.writerUrl,
      schema: db.schema,
      pollIntervalMs: 50,
      mark: { intervalBlocks: MARK_INTERVAL, minIntervalMs: 0 },
      logger: liveLog,
    });
    await step('live indexer start', indexer.start(), 30_000);
    demo = await step('demo scenario', playDemoScenario(stack), 120_000);
    await step('live indexer reaches the demo end', indexer.waitFor(Number(demo.toBlock)), 120_000);
    await step('live indexer stop', indexer.stop(), 30_000);
    liveCheckpoint = indexer.status().checkpoint.blockNumber;

    live = projector({
      brokers: kafkaBrokers(),
      url: db.writerUrl,
      schema: db.schema,
      topic: liveTopic,
      group: 'live',
    });
    await step('projector start', live.start(), 30_000);
    await live.caughtUp({ timeoutMs: 60_000 });

    env = cliEnv(
      db,
      { topic: liveTopic, views: VIEWS },
      {
        RPC_URL: anvil.rpcUrl,
        FACTORY_ADDRESS: stack.factory,
        // The live indexer's settings: the new log must be cut the same way.
        MARK_INTERVAL_BLOCKS: String(MARK_INTERVAL),
        // Other chunking than the live indexer's block-by-block following.
        MAX_BLOCK_RANGE: '5',
        // No strategy topics in this file (names no other file uses: the build finds none).
        SCREEN_TOPIC: uniqueTopic('screen-none'),
        CATALOGUE_TOPIC: uniqueTopic('catalogue-none'),
      },
    );
    const sw = await step(
      'rebuild switch',
      runCli(['rebuild', 'switch', '--schema', db.schema], env),
      60_000,
    );
    expect(sw.stderr).toBe('');
    expect(sw.code).toBe(0);
    ({ reader, url: baseUrl } = await startReader(db, { schema: VIEWS }));
  }, 180_000);

  afterAll(async () => {
    await reader?.stop();
    await live?.stop();
    await indexer?.stop().catch(() => {});
    await anvil?.stop();
    await pool?.end();
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'reindex-test' });
    for (const t of [liveTopic, newTopic, killTopic, headTopic]) await admin.deleteTopic(t).catch(() => {});
    await admin.close();
    await db?.drop();
  });

  it('rebuilds the log into a new topic and the projection from it, and switches the reader', async () => {
    const vault = demo.vaults[1]!.address.toLowerCase();
    const before = await (await fetch(`${baseUrl}/v1/vault/${vault}/snapshot`)).json();

    const res = await runCli(
      [
        'reindex',
        '--topic',
        newTopic,
        '--partitions',
        '3',
        '--schema',
        'vault_yield_rx',
        '--group',
        'reindex-rx',
      ],
      env,
      170_000,
    );
    expect(res.stdout).toMatch(new RegExp(`reindexed ${newTopic} to block \\d+`));
    expect(res.stdout).toMatch(/switched vault_yield_api → vault_yield_rx \(was vault_yield\)/);
    expect(res.stdout).toMatch(new RegExp(`KAFKA_TOPIC=${newTopic}`));
    expect(res.code, res.stderr).toBe(0);

    // The log: the same records, vault by vault in the same order, as the live one and the chain.
    const liveRecords = await liveLogRecords();
    const published = await readTopic(kafkaBrokers(), newTopic);
    const newRecords = firstsOf(published, newTopic);
    expect(new Set(published.map((r) => r.partition)).size).toBeLessThanOrEqual(3);
    expect(newRecords.length).toBe(liveRecords.length);
    expectSameLog(newRecords, liveRecords);
    expect(newRecords.filter((r) => r.record.type === 'mark').length).toBeGreaterThan(0);
    // One partition per vault.
    const partitionsOf = new Map<string, Set<number>>();
    for (const r of newRecords)
      partitionsOf.set(r.record.vault, (partitionsOf.get(r.record.vault) ?? new Set()).add(r.partition));
    for (const s of partitionsOf.values()) expect(s.size).toBe(1);
    const fromChain = await expectedRecords(
      anvil.rpcUrl,
      anvil.chainId,
      stack.factory,
      Number(stack.deploymentBlock),
      Number(demo.toBlock),
    );
    expect(fromChain.length).toBeGreaterThan(30);
    expect(
      newRecords
        .map((r) => r.record)
        .filter((r) => r.type !== 'mark')
        .map(normalized)
        .sort(),
    ).toEqual(fromChain.map(normalized).sort());

    // The projection: built from the new topic, equal to the live one, served by the reader.
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_rx');
    const diffs = await compareSchemas(pool, db.schema, 'vault_yield_rx');
    expect(diffs.filter((d) => !d.equal)).toEqual([]);
    const a = await schemaChecksums(pool, db.schema);
    const b = await schemaChecksums(pool, 'vault_yield_rx');
    expect(Object.keys(b).length).toBeGreaterThan(8);
    expect(b.ledger!.rows).toBeGreaterThan(30);
    expect(b).toEqual(a);
    const applied = (
      await storedOffsetRows(pool, 'vault_yield_rx', { groupId: 'reindex-rx', topic: newTopic })
    ).reduce((n, r) => n + Math.max(0, Number(r.nextOffset)), 0);
    expect(applied).toBe(published.length);
    const build = await getBuild(pool, VIEWS, 'vault_yield_rx');
    expect(build).toMatchObject({
      purpose: 'reindex',
      state: 'live',
      topic: newTopic,
      groupId: 'reindex-rx',
    });
    const after = await (await fetch(`${baseUrl}/v1/vault/${vault}/snapshot`)).json();
    expect(after).toEqual(before);

    // The live indexer's checkpoint is untouched; the new one lives in the namespace.
    expect((await indexerCheckpoints(pool, db.schema)).map((c) => c.blockNumber)).toEqual([liveCheckpoint]);
    const [cp] = await indexerCheckpoints(pool, nsOf(newTopic));
    expect(cp!.blockNumber).toBeGreaterThanOrEqual(Number(demo.toBlock));
  }, 200_000);

  it('a re-run with --no-rebuild resumes from its checkpoint and publishes nothing twice', async () => {
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'reindex-test' });
    try {
      const before = await admin.offsets(newTopic);
      const res = await runCli(
        ['reindex', '--topic', newTopic, '--partitions', '3', '--no-rebuild'],
        env,
        120_000,
      );
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toMatch(/0 records published/);
      expect(res.stdout).not.toMatch(/switched/);
      expect(await admin.offsets(newTopic)).toEqual(before);
      expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_rx');
    } finally {
      await admin.close();
    }
  }, 150_000);

  it('status shows the reindexed namespace against the chain head, and the new projection', async () => {
    const res = await runCli(['status', '--json'], { ...env, INDEXER_SCHEMA: nsOf(newTopic) });
    expect(res.code, res.stderr).toBe(0);
    const report = JSON.parse(res.stdout);
    const head = Number(demo.toBlock);
    expect(report).toMatchObject({
      viewsSchema: VIEWS,
      liveSchema: 'vault_yield_rx',
      indexer: {
        schema: nsOf(newTopic),
        chainHead: head,
        checkpoints: [{ chainId: anvil.chainId, blockNumber: head, topic: newTopic, behind: 0 }],
      },
      deadLetters: [],
    });
    expect(report.switchedAt).toEqual(expect.any(String));
    expect(report.projector).toHaveLength(1);
    const main = report.projector[0];
    expect(main).toMatchObject({ group: 'reindex-rx', topic: newTopic, lag: 0 });
    expect(main.partitions.map((p: { partition: number }) => p.partition)).toEqual([0, 1, 2]);
    // Every record applied: stored = high (a partition no vault hashes to has nothing stored).
    for (const p of main.partitions) {
      expect(p.lag).toBe(0);
      expect(p.stored ?? '0').toBe(p.high);
    }
    expect(main.partitions.some((p: { high: string }) => Number(p.high) > 0)).toBe(true);
    expect(report.builds).toEqual(
      expect.arrayContaining([
        { schema: 'vault_yield_rx', purpose: 'reindex', state: 'live', group: 'reindex-rx', topic: newTopic },
        expect.objectContaining({ schema: db.schema, state: 'retired' }),
      ]),
    );
    const text = await runCli(['status'], { ...env, INDEXER_SCHEMA: nsOf(newTopic) });
    expect(text.stdout).toMatch(
      new RegExp(
        `indexer +chain ${anvil.chainId}: block ${head} \\(0x[0-9a-f]{8}…, [^)]+\\) of topic ${newTopic}; chain head ${head}, 0 blocks behind`,
      ),
    );
    expect(text.stdout).toMatch(new RegExp(`projector +group reindex-rx on ${newTopic}: lag 0`));
    expect(text.stdout).toMatch(/vault_yield_rx reindex live group reindex-rx/);
  });

  it('refuses a start block that would miss vaults or is above the head, a wrong factory, a namespace of another topic', async () => {
    const topic = uniqueTopic('never-written');
    const firstVault = Number(demo.fromBlock);
    const miss = await runCli(['reindex', '--topic', topic, '--start-block', String(firstVault + 1)], env);
    expect(miss.stderr).toMatch(
      new RegExp(
        `start block ${firstVault + 1} is above block ${firstVault}, where the factory created a vault`,
      ),
    );
    expect(miss.code).toBe(2);
    const viaEnv = await runCli(['reindex', '--topic', topic], {
      ...env,
      START_BLOCK: String(firstVault + 1),
    });
    expect(viaEnv.stderr).toMatch(/where the factory created a vault/);
    expect(viaEnv.code).toBe(2);
    const high = await runCli(['reindex', '--topic', topic, '--start-block', '100000'], env);
    expect(high.stderr).toMatch(/start block 100000 is above the chain head/);
    expect(high.code).toBe(2);
    const notFactory = await runCli(['reindex', '--topic', topic], {
      ...env,
      FACTORY_ADDRESS: stack.tokens.weth.address,
    });
    expect(notFactory.stderr).toMatch(/cannot read the factory 0x[0-9a-f]{40} at RPC_URL/);
    expect(notFactory.stderr).not.toMatch(/\n\s+at /);
    expect(notFactory.code).toBe(1);
    // A namespace whose checkpoint is of another topic would resume mid-history: refused.
    const other = await runCli(['reindex', '--topic', topic, '--namespace', nsOf(newTopic)], env);
    expect(other.stderr).toMatch(
      new RegExp(
        `--namespace ${nsOf(newTopic)} holds the checkpoint \\(block \\d+\\) of topic ${newTopic}, not ${topic}: ` +
          `resuming it would leave ${topic} without the history up to that block`,
      ),
    );
    expect(other.code).toBe(2);
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'reindex-test' });
    // Also when the other topic exists (empty): the checkpoint's own topic decides, not existence.
    const existing = uniqueTopic('exists-empty');
    try {
      expect(await admin.listTopics()).not.toContain(topic);
      await admin.ensureTopic({ topic: existing, partitions: 1 });
      const empty = await runCli(['reindex', '--topic', existing, '--namespace', nsOf(newTopic)], env);
      expect(empty.stderr).toMatch(
        new RegExp(
          `--namespace ${nsOf(newTopic)} holds the checkpoint \\(block \\d+\\) of topic ${newTopic}, not ${existing}`,
        ),
      );
      expect(empty.code).toBe(2);
    } finally {
      await admin.deleteTopic(existing).catch(() => {});
      await admin.close();
    }
    // Its own topic, gone (deleted after the checkpoint): resuming would start the log mid-history.
    const gone = uniqueTopic('gone');
    await migrate(pool, nsOf(gone), ROLES.reader);
    await pool.query(
      `insert into ${nsOf(gone)}.indexer_checkpoint (chain_id, block_number, block_hash, topic) values ($1, 5, $2, $3)`,
      [anvil.chainId, `0x${'ab'.repeat(32)}`, gone],
    );
    const deleted = await runCli(['reindex', '--topic', gone], env);
    expect(deleted.stderr).toMatch(
      new RegExp(`--namespace ${nsOf(gone)} holds a checkpoint at block 5, but topic ${gone} does not exist`),
    );
    expect(deleted.code).toBe(2);
    expect(await indexerCheckpoints(pool, nsOf(topic))).toEqual([]);
    expect((await indexerCheckpoints(pool, nsOf(newTopic)))[0]?.topic).toBe(newTopic);
    // Eight commands, each a process of its own: seconds each on a loaded machine.
  }, 180_000);

  it('a reindex SIGKILLed mid-log and run again ends with the same log and the same projection', async () => {
    const args = ['reindex', '--topic', killTopic, '--partitions', '2', '--dry-run'];
    args.push('--schema', 'vault_yield_rk', '--group', 'reindex-rk');
    // One block per chunk: the log is written in many small batches, a kill lands between them.
    const slow = { ...env, MAX_BLOCK_RANGE: '1', CONCURRENCY: '1' };
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...slow },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const exited = new Promise((r) => child.on('exit', r));
    const firstVault = Number(demo.fromBlock);
    let at = -1;
    const deadline = Date.now() + 60_000;
    for (;;) {
      at = (await indexerCheckpoints(pool, nsOf(killTopic)).catch(() => []))[0]?.blockNumber ?? -1;
      if (at > firstVault + 2) break;
      if (Date.now() > deadline) throw new Error('the reindex never passed the first vault');
      await new Promise((r) => setTimeout(r, 10));
    }
    child.kill('SIGKILL');
    await exited;
    expect(at).toBeLessThan(Number(demo.toBlock));

    const resumed = await runCli(args, slow, 170_000);
    expect(resumed.stdout).toMatch(/built vault_yield_rk/);
    expect(resumed.stdout).toMatch(/dry run: not switched/);
    expect(resumed.code, resumed.stderr).toBe(0);

    // Republished records (at most the batch in flight at the kill) are exact duplicates.
    const killed = firstsOf(await readTopic(kafkaBrokers(), killTopic), killTopic);
    expectSameLog(killed, await liveLogRecords());
    const diffs = await compareSchemas(pool, db.schema, 'vault_yield_rk');
    expect(diffs.filter((d) => !d.equal)).toEqual([]);
    expect(await getBuild(pool, VIEWS, 'vault_yield_rk')).toMatchObject({
      purpose: 'reindex',
      state: 'ready',
    });
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_rx');
  }, 250_000);
  // Last: it moves the chain on past the demo (the tests above expect the demo's head).
  it('stops at the chain head it saw at the start, while the chain moves on', async () => {
    const head = Number(await devChain(anvil.rpcUrl).blockNumber());
    // One block per batch: the chain moves on while the log is being rebuilt.
    const slow = { ...env, MAX_BLOCK_RANGE: '1', CONCURRENCY: '1' };
    const child = spawn(
      process.execPath,
      [bin, 'reindex', '--topic', headTopic, '--partitions', '2', '--no-rebuild'],
      {
        env: { ...process.env, LOG_LEVEL: 'warn', ...slow },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const announced = new Promise<number>((resolve, reject) => {
      child.stderr.on('data', (d) => {
        stderr += d;
        const m = /reindexing \S+ up to block (\d+) \(chain head (\d+) at the start, CONFIRMATIONS 0\)/.exec(
          stderr,
        );
        if (m) resolve(Number(m[1]));
      });
      child.on('exit', (code) => reject(new Error(`reindex exited (${code}) before starting:\n${stderr}`)));
    });
    const end = await announced;
    expect(end).toBe(head);
    // Past that head: price moves (the vaults get marks there) and empty blocks.
    const moves = [
      await movePrice(stack, stack.tokens.weth, 3100),
      await movePrice(stack, stack.tokens.weth, 3300),
    ];
    await devChain(anvil.rpcUrl).mine(3);
    expect(child.exitCode, 'the reindex was still running when the chain moved on').toBeNull();
    expect(Number(moves[0])).toBeGreaterThan(end);

    expect(await exited, stderr).toBe(0);
    expect(stdout).toMatch(
      new RegExp(
        `reindexed ${headTopic} to block ${end} \\(the chain head ${end} seen at the start, less CONFIRMATIONS 0\\)`,
      ),
    );
    expect((await indexerCheckpoints(pool, nsOf(headTopic))).map((c) => c.blockNumber)).toEqual([end]);
    // Exactly the live log, which ends at that head too: nothing of the blocks mined meanwhile.
    const got = firstsOf(await readTopic(kafkaBrokers(), headTopic), headTopic);
    expect(Math.max(...got.map((r) => r.record.blockNumber))).toBeLessThanOrEqual(end);
    expectSameLog(got, await liveLogRecords());
  }, 150_000);
});
