import {
  type AnvilInstance,
  type DemoResult,
  deployReferenceStack,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
} from '@vault-yield/devstack/chain';
import { createIndexer, type Indexer } from '@vault-yield/indexer';
import { createBatchConsumer, createLogAdmin, createPublisher, type ReplaceReason } from '@vault-yield/log';
import type { Projector } from '@vault-yield/projector';
import { createIndexerStore, createPgPool, type Pool } from '@vault-yield/store';
import { createTestDatabase, startBoth, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { checksums, projector, query, VAULT_TABLES } from '../projector/support.js';
import { flightRecorder, type OwnKafka, startOwnKafka, until } from './support.js';

const DOWN_MS = 12_000;

/**
 * The broker restarts (down ≥ 10 s) while the indexer publishes and the projector folds. A broker
 * of this test's own, never the shared one. Both must resume by themselves, and the projection
 * equal that of a clean run over the same chain.
 */
describe('Kafka broker restarted or frozen mid-stream', () => {
  let kafka: OwnKafka;
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let demo: DemoResult;
  const dbs: TestDatabase[] = [];
  const running: { stop(): Promise<void> }[] = [];
  // Quiet on a pass; on a failure the last lines of the indexer and projector say what happened.
  const recorder = flightRecorder('kafka-restart');

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
      logger: recorder.logger.child({ part: `indexer-${label}` }),
    });
    const p: Projector = projector({
      brokers: kafka.brokers,
      url: db.writerUrl,
      schema: db.schema,
      topic,
      group: label,
      logger: recorder.logger.child({ part: `projector-${label}` }),
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
    onTestFailed(() => recorder.print());
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

  it('a consumer that shows no sign of life (the broker frozen) is replaced and goes on from the stored offsets', async () => {
    onTestFailed(() => recorder.print());
    const topic = uniqueTopic('fault-kafka-frozen');
    const admin = await createLogAdmin({ brokers: kafka.brokers, clientId: 'fault' });
    await admin.ensureTopic({ topic, partitions: 1 });
    await admin.close();
    const publish = async (from: number, n: number) => {
      const publisher = await createPublisher({ brokers: kafka.brokers, clientId: 'fault', topic });
      await publisher.publishRaw(
        Array.from({ length: n }, (_, i) => ({ key: 'k', value: Buffer.from(`m${from + i}`) })),
      );
      await publisher.close();
    };
    await publish(0, 20);
    // The projection of this consumer: its stored offset and every message it applied.
    let stored = '0';
    const applied: string[] = [];
    const replaced: ReplaceReason[] = [];
    const consumer = createBatchConsumer<string>({
      brokers: kafka.brokers,
      clientId: 'fault',
      groupId: `frozen-${topic}`,
      topic,
      logger: recorder.logger.child({ part: 'frozen-consumer' }),
      decode: (v) => v?.toString('utf8') ?? '',
      storedOffsets: async () => new Map([[0, stored]]),
      handleBatch: async (batch) => {
        if (batch.messages[0]?.offset !== stored) return { seekTo: stored };
        applied.push(...batch.messages.map((m) => m.decoded));
        stored = batch.commit.nextOffset;
        return { applied: true };
      },
      maxWaitTimeMs: 100,
      sessionTimeoutMs: 6_000,
      stallTimeoutMs: 3_000,
      onReplace: (reason) => replaced.push(reason),
    });
    running.push(consumer);
    await consumer.start();
    await until(() => stored === '20', 'the first 20 messages');
    kafka.freeze();
    try {
      // Its requests hang unanswered: no fetch, no heartbeat, no batch — replaced after 3 s.
      await until(() => replaced.includes('stalled'), 'a stalled consumer replaced', 60_000);
    } finally {
      kafka.thaw();
    }
    await publish(20, 20);
    await until(() => stored === '40', 'the next 20 messages after the broker thawed', 90_000);
    expect(applied).toEqual(Array.from({ length: 40 }, (_, i) => `m${i}`));
    expect(replaced[0]).toBe('stalled');
  }, 240_000);
});
