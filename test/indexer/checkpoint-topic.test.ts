import { type AddressInfo, createServer } from 'node:net';
import {
  type AnvilInstance,
  createVault,
  type DevChain,
  deployReferenceStack,
  devChain,
  type ReferenceStack,
  startAnvil,
} from '@vault-yield/devstack/chain';
import { createIndexer, type IndexerConfig, IndexerHaltError } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { createPgPool, indexerCheckpoints, type Pool } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { readTopic, recordId, runIndexerMain, silent } from '@vault-yield/test-kit/indexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run.js';

/**
 * The indexer checkpoint records the topic it is the checkpoint of (migration 0008), on a real
 * anvil chain, Kafka and Postgres: an indexer moved to another topic on the same schema refuses to
 * start (the new topic would miss every record below the checkpoint) and publishes nothing; a
 * checkpoint written before 0008 (no topic) is adopted and then carries the topic; status shows it.
 */
describe('the topic of the indexer checkpoint', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let dev: DevChain;
  let db: TestDatabase;
  let pool: Pool;
  const topicA = uniqueTopic('indexer-topic-a');
  const topicB = uniqueTopic('indexer-topic-b');

  const config = (topic: string): IndexerConfig => ({
    rpcUrl: anvil.rpcUrl,
    factory: stack.factory,
    kafka: { brokers: kafkaBrokers(), topic, partitions: 2 },
    databaseUrl: db.writerUrl,
    schema: db.schema,
    pollIntervalMs: 50,
    logger: silent,
  });
  /** Indexes `topic` on the test schema up to the chain head, then stops. */
  const indexTo = async (topic: string) => {
    const head = Number(await dev.blockNumber());
    const indexer = createIndexer(config(topic));
    await indexer.start();
    try {
      await indexer.waitFor(head);
    } finally {
      await indexer.stop();
    }
    return head;
  };
  const topics = async () => {
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'checkpoint-topic-test' });
    try {
      return await admin.listTopics();
    } finally {
      await admin.close();
    }
  };
  const statusEnv = () => ({ DATABASE_URL: db.writerUrl, PROJECTION_SCHEMA: db.schema });

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    dev = devChain(anvil.rpcUrl);
    await createVault(stack, stack.accounts.owners[0]!, stack.pools[0]!, 'topic-a-1');
    await createVault(stack, stack.accounts.owners[1]!, stack.pools[0]!, 'topic-a-2');
    db = await createTestDatabase('indexer_topic');
    pool = createPgPool({ url: db.writerUrl, applicationName: 'checkpoint-topic-test', max: 2 });
    await indexTo(topicA);
  }, 120_000);

  afterAll(async () => {
    await anvil?.stop();
    await pool?.end();
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'checkpoint-topic-test' });
    for (const t of [topicA, topicB]) await admin.deleteTopic(t).catch(() => {});
    await admin.close();
    await db?.drop();
  });

  it('an indexer that checkpointed topic A, restarted on its schema with topic B, refuses to start and publishes nothing to B', async () => {
    const before = await indexerCheckpoints(pool, db.schema);
    expect(before).toEqual([expect.objectContaining({ chainId: anvil.chainId, topic: topicA })]);
    const at = before[0]!.blockNumber;
    expect((await readTopic(kafkaBrokers(), topicA)).length).toBeGreaterThan(0);
    const why = [
      `the checkpoint of chain ${anvil.chainId} in schema ${db.schema} (block ${at}) is of topic ${topicA}, `,
      `but the indexer publishes to topic ${topicB}: resuming it would leave ${topicB} without every record up to block ${at}. `,
      `Point the indexer back at topic ${topicA} (KAFKA_TOPIC), or give ${topicB} a schema of its own (PROJECTION_SCHEMA)`,
      `\`vault-yield reindex --topic ${topicB}\``,
    ];

    // In process: start() rejects with a halt error naming chain, schema, both topics and the way
    // out, and leaves nothing running: its metrics port is free again before stop().
    const metricsPort = await freePort();
    const indexer = createIndexer({ ...config(topicB), metricsPort });
    const start = indexer.start();
    await expect(start).rejects.toBeInstanceOf(IndexerHaltError);
    for (const part of why) await expect(start).rejects.toThrow(part);
    await listenOnce(metricsPort);
    await indexer.stop();

    // The process: the message on stderr, no stack trace, a non-zero exit.
    const run = await runIndexerMain({
      RPC_URL: anvil.rpcUrl,
      FACTORY_ADDRESS: stack.factory,
      KAFKA_BROKERS: kafkaBrokers().join(','),
      KAFKA_TOPIC: topicB,
      DATABASE_URL: db.writerUrl,
      PROJECTION_SCHEMA: db.schema,
      LOG_LEVEL: 'error',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^indexer refused to start: the checkpoint of chain/);
    for (const part of why) expect(run.stderr).toContain(part);
    expect(run.stderr).not.toMatch(/\n\s+at /);

    // Nothing published to B (the topic is not even created); the checkpoint is untouched.
    expect(await topics()).not.toContain(topicB);
    expect(await indexerCheckpoints(pool, db.schema)).toEqual(before);
  }, 120_000);

  it('a checkpoint without a topic (written before 0008) is adopted, and then carries the topic; status shows it', async () => {
    await pool.query(`update ${db.schema}.indexer_checkpoint set topic = null`);
    const [old] = await indexerCheckpoints(pool, db.schema);
    expect(old).toMatchObject({ chainId: anvil.chainId, topic: null });
    const unknown = await runCli(['status', '--json'], statusEnv());
    expect(unknown.code, unknown.stderr).toBe(0);
    expect(JSON.parse(unknown.stdout).indexer.checkpoints).toEqual([
      expect.objectContaining({ chainId: anvil.chainId, blockNumber: old!.blockNumber, topic: null }),
    ]);
    expect((await runCli(['status'], statusEnv())).stdout).toMatch(
      new RegExp(
        `block ${old!.blockNumber} \\([^)]+\\) of topic \\(not recorded: written before migration 0008\\);`,
      ),
    );
    const published = await readTopic(kafkaBrokers(), topicA);

    // Adopted: the indexer resumes from it (nothing republished) and its next checkpoint records A.
    const created = await createVault(stack, stack.accounts.owners[2]!, stack.pools[0]!, 'topic-a-3');
    const head = await indexTo(topicA);
    expect(head).toBeGreaterThan(old!.blockNumber);
    expect(await indexerCheckpoints(pool, db.schema)).toEqual([
      expect.objectContaining({ chainId: anvil.chainId, blockNumber: head, topic: topicA }),
    ]);
    const now = await readTopic(kafkaBrokers(), topicA);
    const ids = now.map((r) => recordId(r.record));
    expect(new Set(ids).size).toBe(ids.length);
    expect(now.filter((r) => r.record.blockNumber <= old!.blockNumber)).toHaveLength(published.length);
    expect(
      now.some((r) => r.record.type === 'vault.created' && r.record.vault === created.address.toLowerCase()),
    ).toBe(true);

    // Status prints the topic of each checkpoint.
    const json = await runCli(['status', '--json'], statusEnv());
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).indexer).toMatchObject({
      schema: db.schema,
      checkpoints: [{ chainId: anvil.chainId, blockNumber: head, topic: topicA }],
    });
    const text = await runCli(['status'], statusEnv());
    expect(text.stdout).toMatch(
      new RegExp(
        `indexer +chain ${anvil.chainId}: block ${head} \\(0x[0-9a-f]{8}…, [^)]+\\) of topic ${topicA};`,
      ),
    );
  }, 120_000);
});

/** A port nothing listens on (the OS's pick, released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((res) => server.close(() => res()));
  return port;
}

/** Listens on `port` and closes again: rejects (EADDRINUSE) while something else holds it. */
async function listenOnce(port: number): Promise<void> {
  const server = createServer();
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(port, '127.0.0.1', () => res());
  });
  await new Promise<void>((res) => server.close(() => res()));
}
