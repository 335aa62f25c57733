import {
  type AnvilInstance,
  type DemoResult,
  type DevChain,
  deployReferenceStack,
  devChain,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
} from '@vault-yield/devstack/chain';
import type { VaultRecord } from '@vault-yield/domain';
import { createIndexer, type IndexerConfig } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { createPgPool, indexerCheckpoints, migrate, type Pool } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import {
  byVault,
  expectedRecords,
  normalized,
  readTopic,
  runIndexerMain,
  silent,
} from '@vault-yield/test-kit/indexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The indexer with an end block, on a real anvil chain, Kafka and Postgres: blocks (with vault
 * records and price moves) exist past the end block, yet the topic holds exactly the records up
 * to it (those of an indexer following the head, cut there) and the checkpoint is that block;
 * `done` resolves and main.ts exits 0. An end block above the confirmed head is waited for, never
 * overshot.
 */
describe('indexer end block', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let demo: DemoResult;
  let dev: DevChain;
  let db: TestDatabase;
  let pool: Pool;
  /** The first price move: marks at the end block itself, vault records after it. */
  let end: number;
  const refTopic = uniqueTopic('indexer-end-ref');
  const endTopic = uniqueTopic('indexer-end');
  const mainTopic = uniqueTopic('indexer-end-main');
  const confTopic = uniqueTopic('indexer-end-conf');
  const topics = [refTopic, endTopic, mainTopic, confTopic];

  const config = (schema: string, topic: string, extra: Partial<IndexerConfig> = {}): IndexerConfig => ({
    rpcUrl: anvil.rpcUrl,
    factory: stack.factory,
    kafka: { brokers: kafkaBrokers(), topic, partitions: 3 },
    databaseUrl: db.writerUrl,
    schema,
    pollIntervalMs: 50,
    maxBlockRange: 4,
    concurrency: 2,
    mark: { intervalBlocks: 3, minIntervalMs: 0 },
    logger: silent,
    ...extra,
  });
  /** Each vault's records in topic order, as comparable text. */
  const perVault = (rs: readonly VaultRecord[]) =>
    new Map([...byVault(rs)].map(([v, list]) => [v, list.map(normalized)]));
  const blockHash = async (n: number) =>
    (await dev.rpc.call<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash;
  const records = async (topic: string) => (await readTopic(kafkaBrokers(), topic)).map((t) => t.record);

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    dev = devChain(anvil.rpcUrl);
    demo = await playDemoScenario(stack);
    end = Number(demo.priceMoves[0]!.blockNumber);
    db = await createTestDatabase('indexer_end');
    pool = createPgPool({ url: db.writerUrl, applicationName: 'end-block-test', max: 2 });
    for (const s of ['idx_ref', 'idx_end', 'idx_main', 'idx_conf']) await migrate(pool, s);
    // Reference: an indexer following the head over the whole scenario.
    const ref = createIndexer(config('idx_ref', refTopic));
    await ref.start();
    await ref.waitFor(Number(demo.toBlock));
    await ref.stop();
  }, 180_000);

  afterAll(async () => {
    await anvil?.stop();
    await pool?.end();
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'end-block-test' });
    for (const t of topics) await admin.deleteTopic(t).catch(() => {});
    await admin.close();
    await db?.drop();
  });

  it('publishes and checkpoints up to the end block, then finishes instead of following the head', async () => {
    // The chain goes on past the end block: vault records and marks the indexer must leave out.
    const all = await expectedRecords(
      anvil.rpcUrl,
      anvil.chainId,
      stack.factory,
      Number(stack.deploymentBlock),
      Number(demo.toBlock),
    );
    expect(all.filter((r) => r.blockNumber > end).length).toBeGreaterThan(5);
    const reference = await records(refTopic);
    expect(reference.some((r) => r.blockNumber > end && r.type === 'mark')).toBe(true);

    const indexer = createIndexer(config('idx_end', endTopic, { endBlock: end }));
    await indexer.start();
    await indexer.done;
    const s = indexer.status();
    expect(s).toMatchObject({ endBlock: end, ended: true, checkpoint: { blockNumber: end } });
    expect(s.checkpoint.blockHash).toBe(await blockHash(end));
    expect(s.head).toBeGreaterThan(end);
    await indexer.stop();
    expect((await indexerCheckpoints(pool, 'idx_end')).map((c) => [c.blockNumber, c.blockHash])).toEqual([
      [end, await blockHash(end)],
    ]);

    // Exactly the records up to the end block: the reference's, cut there, in the same order per
    // vault, with the chain's own up to there (independent decode) and marks at the end block.
    const got = await records(endTopic);
    expect(Math.max(...got.map((r) => r.blockNumber))).toBe(end);
    expect(perVault(got)).toEqual(perVault(reference.filter((r) => r.blockNumber <= end)));
    const upToEnd = all.filter((r) => r.blockNumber <= end);
    expect(upToEnd.length).toBeGreaterThan(5);
    expect(
      got
        .filter((r) => r.type !== 'mark')
        .map(normalized)
        .sort(),
    ).toEqual(upToEnd.map(normalized).sort());
    expect(got.some((r) => r.type === 'mark' && r.blockNumber === end)).toBe(true);
  }, 120_000);

  it('refuses to start past its end block, and to wait for a block above it', async () => {
    const past = createIndexer(config('idx_end', endTopic, { endBlock: end - 1 }));
    await expect(past.start()).rejects.toThrow(
      new RegExp(`the checkpoint \\(block ${end}\\) is above the end block ${end - 1}`),
    );
    const fresh = createIndexer(config('idx_main', mainTopic, { startBlock: end + 1, endBlock: end }));
    await expect(fresh.start()).rejects.toThrow(`the start block ${end + 1} is above the end block ${end}`);
    await expect(fresh.waitFor(end + 1)).rejects.toThrow(`block ${end + 1} is above the end block ${end}`);
    expect(await indexerCheckpoints(pool, 'idx_main')).toEqual([]);
  });

  it('main.ts with END_BLOCK exits 0 once the end block is checkpointed; a bad END_BLOCK is refused', async () => {
    const env = {
      RPC_URL: anvil.rpcUrl,
      FACTORY_ADDRESS: stack.factory,
      KAFKA_BROKERS: kafkaBrokers().join(','),
      KAFKA_TOPIC: mainTopic,
      KAFKA_PARTITIONS: '3',
      DATABASE_URL: db.writerUrl,
      PROJECTION_SCHEMA: 'idx_main',
      POLL_INTERVAL_MS: '50',
      MAX_BLOCK_RANGE: '4',
      CONCURRENCY: '2',
      MARK_INTERVAL_BLOCKS: '3',
      LOG_LEVEL: 'error',
    };
    const run = (extra: Record<string, string>) => runIndexerMain({ ...env, ...extra });
    const bad = await run({ END_BLOCK: '-1' });
    expect(bad.stderr).toMatch(/END_BLOCK/);
    expect(bad.code).not.toBe(0);

    const ok = await run({ END_BLOCK: String(end) });
    expect(ok.code, ok.stderr).toBe(0);
    expect((await indexerCheckpoints(pool, 'idx_main')).map((c) => c.blockNumber)).toEqual([end]);
    expect(perVault(await records(mainTopic))).toEqual(perVault(await records(endTopic)));
  }, 120_000);

  it('waits for an end block above the confirmed head, and never publishes past the confirmed head', async () => {
    const head = Number(await dev.blockNumber());
    const confirmations = 2;
    const target = head + 1; // confirmed once the head is head + 3
    const indexer = createIndexer(config('idx_conf', confTopic, { confirmations, endBlock: target }));
    try {
      await indexer.start();
      await indexer.waitFor(head - confirmations);
      // Caught up with the confirmed head, below the end block: still running, not past it.
      expect(indexer.status()).toMatchObject({
        ended: false,
        checkpoint: { blockNumber: head - confirmations },
      });
      await dev.mine(2);
      await indexer.waitFor(head);
      expect(indexer.status()).toMatchObject({ ended: false, checkpoint: { blockNumber: head } });
      // Five more blocks: the end block is confirmed, the blocks above it are left alone.
      await dev.mine(5);
      await indexer.done;
      expect(indexer.status()).toMatchObject({ ended: true, checkpoint: { blockNumber: target } });
      expect((await indexerCheckpoints(pool, 'idx_conf')).map((c) => c.blockNumber)).toEqual([target]);
      const got = await records(confTopic);
      expect(Math.max(...got.map((r) => r.blockNumber))).toBeLessThanOrEqual(target);
      expect(perVault(got)).toEqual(
        perVault((await records(refTopic)).filter((r) => r.blockNumber <= target)),
      );
    } finally {
      await indexer.stop();
    }
  }, 120_000);
});
