import { createLogger } from '@vault-yield/common';
import { type AnvilInstance, type ReferenceStack, startAnvil } from '@vault-yield/devstack/chain';
import { createIndexer, type Indexer, type IndexerConfig } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { createProjector, type Projector } from '@vault-yield/projector';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { startReader, type TestReader } from '@vault-yield/test-kit/reader';
import { createPublicClient, http, type PublicClient } from 'viem';
import { valueAtHead } from './index.js';

/**
 * The whole pipeline over a chain a test drives: indexer (in-process) → Kafka → projector →
 * Postgres → reader, plus a second anvil to value vaults on (valueAtHead pokes the pool on an
 * anvil snapshot: on a fork reset to the block, the followed chain never sees those blocks).
 */
export interface ChainPipeline {
  db: TestDatabase;
  indexer: Indexer;
  projector: Projector;
  api: TestReader;
  topic: string;
  /** Waits until the reader serves the chain's current head. */
  settle(): Promise<void>;
  /** valueAtHead of a vault at the followed chain's head, computed on the fork. */
  truth(vault: `0x${string}`): ReturnType<typeof valueAtHead>;
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
  const fork = await startAnvil();
  const forkClient = createPublicClient({ transport: http(fork.rpcUrl), cacheTime: 0 }) as PublicClient;
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
  /** The block the fork stands at (valueAtHead reverts what it does there: reset once per block). */
  let forkedAt = -1;
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
      const block = await head();
      if (block === forkedAt) return valueAtHead(forkClient, vault);
      const r = await fetch(fork.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'anvil_reset',
          params: [{ forking: { jsonRpcUrl: anvil.rpcUrl, blockNumber: block } }],
        }),
      });
      const body = (await r.json()) as { error?: { message: string } };
      if (body.error) throw new Error(`anvil_reset: ${body.error.message}`);
      forkedAt = block;
      return valueAtHead(forkClient, vault);
    },
    async stop() {
      await api.stop();
      await projector.stop();
      await indexer.stop();
      await fork.stop();
      await db.drop();
    },
  };
}
