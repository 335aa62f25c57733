import { createLogger } from '@vault-yield/common';
import { vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  type DemoResult,
  deployReferenceStack,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
  write,
} from '@vault-yield/devstack/chain';
import { ROLES } from '@vault-yield/devstack/postgres';
import { recordId } from '@vault-yield/domain';
import { type FollowingIndexer, followLiveIndexer } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { type FollowingProjections, followLiveProjections } from '@vault-yield/projector';
import { createPgPool, getBuild, liveLog, liveSchema, type Pool, recordBuild } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { readTopic } from '@vault-yield/test-kit/indexer';
import { startReader, type TestReader } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli/run.js';

/**
 * After `vault-yield reindex` the indexer and the reader follow by themselves (#48 item 2), on
 * anvil, Kafka and Postgres in the deployed role layout: an indexer following the live log
 * (FOLLOW_LIVE) publishes the chain to the live topic, a following projector folds it, a reader
 * serves the views with its `/ready` lag measured on the configured topic and checkpoint. The
 * operator runs `reindex --topic NEW` as the migrator with neither WRITER_ROLE nor READER_ROLE;
 * the services run as the writer. Then a deposit on the chain reaches the API as a new ledger row:
 * the indexer moved to NEW and the reindex's checkpoint namespace (NEW got the deposit, the old
 * topic did not, nothing was published twice), and `/ready`'s lag reads NEW. Before, the indexer
 * kept publishing to the old topic that nothing folds any more: the deposit never showed.
 */
const VIEWS = 'vault_yield_api';
const silent = createLogger({ name: 'reindex-follow-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** Polls `probe` until it returns a value (not undefined), or fails naming `what`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the indexer and the reader follow a reindex', () => {
  const oldTopic = uniqueTopic('reindex-follow-old');
  const newTopic = uniqueTopic('reindex-follow-new');
  const namespace = `vault_yield_idx_${newTopic.replace(/[^a-z0-9]+/g, '_')}`.slice(0, 63);
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let demo: DemoResult;
  let db: TestDatabase;
  let pool: Pool;
  let indexer: FollowingIndexer;
  let projections: FollowingProjections;
  let reader: TestReader;
  let env: Record<string, string>;

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    demo = await playDemoScenario(stack);
    db = await createTestDatabase('reindex_follow', { split: true });
    pool = createPgPool({ url: db.migratorUrl, applicationName: 'reindex-follow-test', max: 2 });
    const full = cliEnv(
      db,
      { topic: oldTopic, views: VIEWS },
      {
        RPC_URL: anvil.rpcUrl,
        FACTORY_ADDRESS: stack.factory,
        MIGRATE_DATABASE_URL: db.migratorUrl,
        SCREEN_TOPIC: uniqueTopic('screen-none'),
        CATALOGUE_TOPIC: uniqueTopic('catalogue-none'),
      },
    );
    // The views' bootstrap names the roles once; the operator's later commands do not.
    const sw = await runCli(['rebuild', 'switch', '--schema', db.schema], {
      ...full,
      WRITER_ROLE: ROLES.writer,
    });
    expect(sw.code, sw.stderr).toBe(0);
    const { READER_ROLE: _reader, ...bare } = full;
    env = bare;

    indexer = followLiveIndexer(
      {
        rpcUrl: anvil.rpcUrl,
        factory: stack.factory,
        kafka: { brokers: kafkaBrokers(), topic: oldTopic, partitions: 3 },
        databaseUrl: db.writerUrl,
        schema: db.schema,
        pollIntervalMs: 50,
        logger: silent,
      },
      { viewsSchema: VIEWS, intervalMs: 500 },
    );
    await indexer.start();
    await indexer.waitFor(Number(demo.toBlock));
    projections = followLiveProjections(
      {
        kafka: {
          brokers: kafkaBrokers(),
          topic: oldTopic,
          consumerGroup: 'live',
          groupId: `live.${oldTopic}`,
          sessionTimeoutMs: 6_000,
        },
        databaseUrl: db.writerUrl,
        schema: db.schema,
        logger: silent,
        strategy: null,
      },
      { viewsSchema: VIEWS, intervalMs: 500 },
    );
    await projections.started;
    await projections.current().vault.caughtUp({ timeoutMs: 60_000 });
    reader = await startReader(db, {
      schema: VIEWS,
      freshness: {
        kafka: { brokers: kafkaBrokers(), topic: oldTopic, security: {} },
        indexerSchema: db.schema,
        maxLagRecords: 0,
        maxLagSeconds: 0,
      },
    });
  }, 240_000);

  afterAll(async () => {
    await reader?.stop();
    await projections?.stop();
    await indexer?.stop().catch(() => {});
    await anvil?.stop();
    await pool?.end();
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'reindex-follow-test' });
    for (const t of [oldTopic, newTopic]) await admin.deleteTopic(t).catch(() => {});
    await admin.close();
    await db?.drop();
  });

  it('a deposit after the reindex reaches the API through the new topic, and /ready reads it', async () => {
    const r = await runCli(
      [
        'reindex',
        '--topic',
        newTopic,
        '--partitions',
        '3',
        '--schema',
        'vault_yield_rf',
        '--group',
        'reindex-rf',
      ],
      env,
      200_000,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `^next: indexers with FOLLOW_LIVE=true .* move to ${newTopic} and the checkpoint namespace ${namespace}`,
        'm',
      ),
    );
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_rf');
    expect((await getBuild(pool, VIEWS, 'vault_yield_rf'))?.indexerSchema).toBe(namespace);

    await until('the indexer moves to the new log', async () =>
      indexer.topic() === newTopic ? true : undefined,
    );
    expect(indexer.schema()).toBe(namespace);
    await until('the projector moves to the new schema', async () =>
      projections.schema() === 'vault_yield_rf' ? true : undefined,
    );

    // New chain activity: a deposit into a demo vault, from its owner (WETH approved by the demo).
    const vault = demo.vaults[0]!;
    const receipt = await write(stack.clients, vault.owner, vault.address, vaultAbi, 'deposit', [
      stack.tokens.weth.address,
      10n ** 17n,
    ]);
    const block = Number(receipt.blockNumber);
    const row = await until('the deposit reaches the API', async () => {
      const res = await reader.get(`/v1/vault/${vault.address.toLowerCase()}/events?limit=5`);
      if (res.status !== 200) return undefined;
      const rows = res.body as { txHash: string; type: string; blockNumber: number }[];
      return rows.find((x) => x.txHash.toLowerCase() === receipt.transactionHash.toLowerCase());
    });
    expect(row.blockNumber).toBe(block);

    // The new log got it, the old one did not; nothing in the new log was published twice.
    const fresh = await readTopic(kafkaBrokers(), newTopic);
    expect(fresh.some((x) => x.record.blockNumber === block && x.record.type !== 'mark')).toBe(true);
    const ids = fresh.map((x) => recordId(x.record));
    expect(new Set(ids).size).toBe(ids.length);
    const old = await readTopic(kafkaBrokers(), oldTopic);
    expect(old.some((x) => x.record.blockNumber >= block)).toBe(false);

    // /ready measures the live log: the new topic's watermarks and the namespace's checkpoint.
    const lag = await until('/ready reads the new log', async () => {
      const res = await reader.get('/ready');
      const body = res.body as { lag?: { records: number | null; headBlock: number | null } };
      const l = body.lag;
      return l && l.records === 0 && (l.headBlock ?? 0) >= block ? l : undefined;
    });
    expect(lag.records).toBe(0);
  }, 300_000);

  it('a following indexer restarted after the reindex starts on the new log, not the configured one', async () => {
    const at = indexer.status().checkpoint.blockNumber;
    await indexer.stop();
    indexer = followLiveIndexer(
      {
        rpcUrl: anvil.rpcUrl,
        factory: stack.factory,
        kafka: { brokers: kafkaBrokers(), topic: oldTopic, partitions: 3 },
        databaseUrl: db.writerUrl,
        schema: db.schema,
        pollIntervalMs: 50,
        logger: silent,
      },
      { viewsSchema: VIEWS, intervalMs: 500 },
    );
    await indexer.start();
    expect([indexer.topic(), indexer.schema()]).toEqual([newTopic, namespace]);
    expect(indexer.status().checkpoint.blockNumber).toBeGreaterThanOrEqual(at);
  }, 60_000);

  it('rolled back to the never-built schema, the indexer goes back to its log; forward again, to NEW: a deposit reaches the API each time', async () => {
    const vault = demo.vaults[0]!;
    /** A deposit from the vault's owner, then its ledger row served by the reader. */
    const depositServed = async (what: string) => {
      const receipt = await write(stack.clients, vault.owner, vault.address, vaultAbi, 'deposit', [
        stack.tokens.weth.address,
        10n ** 16n,
      ]);
      await until(`${what}: the deposit reaches the API`, async () => {
        const res = await reader.get(`/v1/vault/${vault.address.toLowerCase()}/events?limit=5`);
        if (res.status !== 200) return undefined;
        const rows = res.body as { txHash: string }[];
        return (
          rows.some((x) => x.txHash.toLowerCase() === receipt.transactionHash.toLowerCase()) || undefined
        );
      });
      return Number(receipt.blockNumber);
    };

    // Back to the schema the views were bootstrapped on (no build record: it folds the configured
    // log). The following projector folds the old topic there; the indexer must publish it again,
    // from the old namespace's checkpoint (where it left it), or nothing new is ever served.
    const back = await runCli(['rebuild', 'switch', '--schema', db.schema], env);
    expect(back.code, back.stderr).toBe(0);
    await until('the indexer goes back to the configured log', async () =>
      indexer.topic() === oldTopic ? true : undefined,
    );
    expect(indexer.schema()).toBe(db.schema);
    await until('the projector goes back to the initial schema', async () =>
      projections.schema() === db.schema ? true : undefined,
    );
    const onOld = await depositServed('rolled back');
    const old = await readTopic(kafkaBrokers(), oldTopic);
    expect(old.some((x) => x.record.blockNumber === onOld && x.record.type !== 'mark')).toBe(true);
    const oldIds = old.map((x) => recordId(x.record));
    expect(new Set(oldIds).size, 'the old log resumed where it ended: nothing published twice').toBe(
      oldIds.length,
    );

    // Forward again: NEW resumes from the namespace's checkpoint, the blocks mined meanwhile included.
    const forward = await runCli(['rebuild', 'switch', '--schema', 'vault_yield_rf'], env);
    expect(forward.code, forward.stderr).toBe(0);
    await until('the indexer moves to NEW again', async () =>
      indexer.topic() === newTopic ? true : undefined,
    );
    expect(indexer.schema()).toBe(namespace);
    const onNew = await depositServed('forward again');
    const fresh = await readTopic(kafkaBrokers(), newTopic);
    expect(fresh.some((x) => x.record.blockNumber === onOld && x.record.type !== 'mark')).toBe(true);
    expect(fresh.some((x) => x.record.blockNumber === onNew && x.record.type !== 'mark')).toBe(true);
    const ids = fresh.map((x) => recordId(x.record));
    expect(new Set(ids).size).toBe(ids.length);
  }, 180_000);

  it('a views schema made before the indexer schema column upgrades: the column, vy_live_log()', async () => {
    const old = 'vault_yield_api_before';
    await pool.query(`create schema ${old}`);
    await pool.query(
      `create table ${old}.vy_builds (schema text primary key, purpose text not null, group_id text not null,
         topic text not null, market jsonb, state text not null, prepared boolean not null default false,
         unlogged boolean not null default false, deferred_indexes jsonb not null default '[]'::jsonb,
         started_at timestamptz not null default now(), caught_up_at timestamptz, switched_at timestamptz,
         retired_at timestamptz, dropped_at timestamptz)`,
    );
    await pool.query(
      `create table ${old}.vy_live (id boolean primary key default true check (id), schema text not null,
         previous text, switched_at timestamptz not null default now())`,
    );
    await pool.query(
      `insert into ${old}.vy_builds (schema, purpose, group_id, topic, state, switched_at)
       values ('vault_yield_rf', 'reindex', 'reindex-rf', $1, 'live', now())`,
      [newTopic],
    );
    await pool.query(`insert into ${old}.vy_live (schema) values ('vault_yield_rf')`);
    expect(await liveLog(pool, old)).toBeNull();
    // A reindex resuming its build records the namespace on the existing row.
    const b = await recordBuild(pool, old, {
      schema: 'vault_yield_rf',
      purpose: 'reindex',
      groupId: 'reindex-rf',
      topic: newTopic,
      market: null,
      indexerSchema: namespace,
    });
    expect([b.state, b.indexerSchema]).toEqual(['live', namespace]);
    expect(await liveLog(pool, old)).toEqual({
      schema: 'vault_yield_rf',
      topic: newTopic,
      indexerSchema: namespace,
    });
    await pool.query(`drop schema ${old} cascade`);
  });
});
