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
import { createIndexer, type IndexerConfig } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { createPgPool, migrate } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { silent } from '@vault-yield/test-kit/indexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * New heads over WebSocket (RPC_WS_URL): with a ten-minute poll interval, a block mined after the
 * indexer caught up is indexed only because the node announced it; without a reachable socket the
 * indexer polls as before. Real anvil (WebSocket on its HTTP port), Kafka and Postgres.
 */
describe('indexer follows new heads over WebSocket', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let demo: DemoResult;
  let dev: DevChain;
  let db: TestDatabase;
  const topics = [uniqueTopic('indexer-heads-ws'), uniqueTopic('indexer-heads-poll')];

  const config = (schema: string, topic: string, extra: Partial<IndexerConfig>): IndexerConfig => ({
    rpcUrl: anvil.rpcUrl,
    factory: stack.factory,
    kafka: { brokers: kafkaBrokers(), topic, partitions: 3 },
    databaseUrl: db.writerUrl,
    schema,
    logger: silent,
    ...extra,
  });

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    dev = devChain(anvil.rpcUrl);
    demo = await playDemoScenario(stack);
    db = await createTestDatabase('indexer_heads');
    const pool = createPgPool({ url: db.writerUrl, applicationName: 'heads-test', max: 1 });
    for (const s of ['idx_ws', 'idx_poll']) await migrate(pool, s);
    await pool.end();
  }, 180_000);

  afterAll(async () => {
    await anvil?.stop();
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'heads-test' });
    for (const t of topics) await admin.deleteTopic(t).catch(() => {});
    await admin.close();
    await db?.drop();
  });

  it('a block mined after it caught up is indexed at once, though the next poll is ten minutes away', async () => {
    const indexer = createIndexer(
      config('idx_ws', topics[0]!, {
        rpcWsUrl: anvil.rpcUrl.replace(/^http/, 'ws'),
        pollIntervalMs: 600_000,
      }),
    );
    await indexer.start();
    try {
      await indexer.waitFor(Number(demo.toBlock));
      // Mine until the subscription has delivered (it opens while the backfill runs).
      for (let i = 0; i < 100 && indexer.status().heads !== 'subscribed'; i++) {
        await dev.rpc.call('evm_mine', []);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(indexer.status().heads).toBe('subscribed');
      await dev.rpc.call('evm_mine', []);
      const head = Number(await dev.rpc.call<string>('eth_blockNumber', []));
      // Without the announcement this would wait for the poll ten minutes from now (test time-out).
      await indexer.waitFor(head);
      expect(indexer.status().checkpoint.blockNumber).toBe(head);
    } finally {
      await indexer.stop();
    }
  }, 60_000);

  it('an unreachable WebSocket endpoint leaves it polling, and indexing', async () => {
    const indexer = createIndexer(
      config('idx_poll', topics[1]!, { rpcWsUrl: 'ws://127.0.0.1:9', pollIntervalMs: 50 }),
    );
    await indexer.start();
    try {
      await dev.rpc.call('evm_mine', []);
      const head = Number(await dev.rpc.call<string>('eth_blockNumber', []));
      await indexer.waitFor(head);
      expect(indexer.status().heads).toBe('polling');
    } finally {
      await indexer.stop();
    }
  }, 60_000);
});
