import {
  type AnvilInstance,
  type DemoResult,
  deployReferenceStack,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
} from '@vault-yield/devstack/chain';
import { createIndexer, type Indexer } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import type { Projector } from '@vault-yield/projector';
import { createIndexerStore, createPgPool, type Pool } from '@vault-yield/store';
import { createTestDatabase, startBoth, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { silent } from '@vault-yield/test-kit/indexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checksums, projector, query, VAULT_TABLES } from '../projector/support.js';
import { type OwnKafka, startOwnKafka, until } from './support.js';

const DOWN_MS = 12_000;

/**
 * The broker restarts (down ≥ 10 s) while the indexer publishes and the projector folds. A broker
 * of this test's own, never the shared one. Both must resume by themselves, and the projection
 * equal that of a clean run over the same chain.
 */
describe('Kafka broker restart mid-stream', () => {
  let kafka: OwnKafka;
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let demo: DemoResult;
  const dbs: TestDatabase[] = [];
  const running: { stop(): Promise<void> }[] = [];

  beforeAll(async () => {
    await startBoth(startOwnKafka(), startAnvil(), (k, a) => {
      if (k) kafka = k;
      if (a) anvil = a;
    });
    stack = await deployReferenceStack(anvil.rpcUrl);
    demo = await playDemoScenario(stack);
  }, 180_000);
  afterAll(async () => {
    for (const r of running.reverse()) await r.stop().catch(() => {});
    await anvil?.stop();
    await kafka?.destroy();
    for (const db of dbs) await db.drop();
  });

  async function pipeline(label: string) {
    const topic = uniqueTopic(`fault-kafka-${label}`);
    const db = await createTestDatabase(`fault_kafka_${label}`);
    dbs.push(db);
    const admin = await createLogAdmin({ brokers: kafka.brokers, clientId: 'fault' });
    await admin.ensureTopic({ topic, partitions: 4 });
    await admin.close();
    const indexer: Indexer = createIndexer({
      rpcUrl: anvil.rpcUrl,
      chainId: anvil.chainId,
      factory: stack.factory,
      startBlock: Number(stack.deploymentBlock),
      kafka: { brokers: kafka.brokers, topic, partitions: 4 },
      databaseUrl: db.writerUrl,
      schema: db.schema,
      pollIntervalMs: 50,
      // One block per batch: the backfill takes long enough to be cut in the middle.
      maxBlockRange: 1,
      concurrency: 1,
      mark: { intervalBlocks: 3 },
      logger: silent,
    });
    const p: Projector = projector({
      brokers: kafka.brokers,
      url: db.writerUrl,
      schema: db.schema,
      topic,
      group: label,
    });
    running.push(p, indexer);
    await p.start();
    await indexer.start();
    const pool: Pool = createPgPool({
      url: db.writerUrl,
      schema: db.schema,
      applicationName: 'fault',
      max: 1,
    });
    running.push({ stop: () => pool.end() });
    const checkpoint = async () =>
      (await createIndexerStore(pool).load(anvil.chainId)).checkpoint?.blockNumber ?? -1;
    return { db, indexer, projector: p, checkpoint };
  }

  it('indexer and projector resume by themselves; the tables equal a clean run', async () => {
    const clean = await pipeline('clean');
    await clean.indexer.waitFor(Number(demo.toBlock));
    await clean.projector.caughtUp({ timeoutMs: 120_000 });
    const expected = await checksums(clean.db.writerUrl, clean.db.schema, VAULT_TABLES);
    await clean.indexer.stop();
    await clean.projector.stop();
    expect(expected.ledger?.rows).toBeGreaterThan(0);

    const run = await pipeline('restart');
    const from = Number(stack.deploymentBlock);
    const to = Number(demo.toBlock);
    let halted: unknown;
    run.indexer.done.catch((err: unknown) => {
      halted = err;
    });
    await until(
      async () => (await run.checkpoint()) >= from + Math.floor((to - from) / 4),
      'indexer progress',
    );
    const [ledgerBefore] = await query<{ n: number }>(
      run.db.writerUrl,
      run.db.schema,
      'select count(*)::int as n from ledger',
    );
    await kafka.stop();
    const stoppedAt = await run.checkpoint();
    await new Promise((r) => setTimeout(r, DOWN_MS));
    expect(halted).toBeUndefined();
    await kafka.start();

    await run.indexer.waitFor(to);
    expect(stoppedAt).toBeLessThan(to);
    await run.projector.caughtUp({ timeoutMs: 120_000 });
    expect(ledgerBefore?.n ?? 0).toBeLessThan(expected.ledger?.rows ?? 0);
    expect(await checksums(run.db.writerUrl, run.db.schema, VAULT_TABLES)).toEqual(expected);
  }, 300_000);
});
