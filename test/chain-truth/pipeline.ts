import { createLogger } from '@vault-yield/common';
import type { AnvilInstance, ReferenceStack } from '@vault-yield/devstack/chain';
import { createIndexer, type Indexer, type IndexerConfig } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { createProjector, type Projector } from '@vault-yield/projector';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { startReader, type TestReader } from '@vault-yield/test-kit/reader';
import { valueAt } from './index.js';

/**
 * The whole pipeline over a chain a test drives: indexer (in-process) → Kafka → projector →
 * Postgres → reader, and the chain's own valuation of a vault at the head (valueAt: the pool pokes
 * each position's fees for the vault — FeeProbe's code at the vault's address — in an eth_call at
 * the block, mining nothing, so the indexer never sees it; value-at-head.test.ts proves it equal to
 * the burn-and-read on a snapshot, valueAtHead).
 */
export interface ChainPipeline {
  db: TestDatabase;
  indexer: Indexer;
  projector: Projector;
  api: TestReader;
  topic: string;
  /** Waits until the reader serves the chain's current head. */
  settle(): Promise<void>;
  /** The chain's valuation of a vault at the followed chain's head (valueAt). */
  truth(vault: `0x${string}`): ReturnType<typeof valueAt>;
  stop(): Promise<void>;
}

export async function startChainPipeline(
  anvil: AnvilInstance,
  stack: ReferenceStack,
  label: string,
  indexerOptions: Pick<IndexerConfig, 'mark' | 'heartbeats'> = {},
): Promise<ChainPipeline> {
  const log = createLogger({ name: label, level: 'warn' });
  const topic = uniqueTopic(label);
  const db = await createTestDatabase(label);
  const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: label });
  await admin.ensureTopic({ topic, partitions: 4 });
  await admin.close();
  const indexer = createIndexer({
    rpcUrl: anvil.rpcUrl,
    chainId: anvil.chainId,
    factory: stack.factory,
    startBlock: Number(stack.deploymentBlock),
    kafka: { brokers: kafkaBrokers(), topic },
    databaseUrl: db.writerUrl,
    schema: db.schema,
    pollIntervalMs: 50,
    logger: log,
    ...indexerOptions,
  });
  await indexer.start();
  const projector = createProjector({
    kafka: { brokers: kafkaBrokers(), topic, consumerGroup: label },
    databaseUrl: db.writerUrl,
    schema: db.schema,
    migrate: false,
    logger: log,
  });
  await projector.start();
  const api = await startReader(db);
  const head = async () => Number(await stack.clients.publicClient.getBlockNumber());
  const client = stack.clients.publicClient;
  return {
    db,
    indexer,
    projector,
    api,
    topic,
    async settle() {
      await indexer.waitFor(await head());
      await projector.caughtUp({ timeoutMs: 60_000, pollMs: 50 });
    },
    async truth(vault) {
      return valueAt(client, vault, await client.getBlockNumber());
    },
    async stop() {
      await api.stop();
      await projector.stop();
      await indexer.stop();
      await db.drop();
    },
  };
}
