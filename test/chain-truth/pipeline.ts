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

/** One followed chain of a pipeline: its node and the reference stack deployed on it. */
export interface FollowedChain {
  anvil: AnvilInstance;
  stack: ReferenceStack;
}

/**
 * The pipeline over several chains (#45): one indexer per chain (each its own RPC, checkpoint and
 * loop), one topic, one projector, one reader — the deployment's shape.
 */
export interface ChainsPipeline extends Omit<ChainPipeline, 'indexer' | 'truth'> {
  indexers: Indexer[];
  /** The chain's own valuation of a vault at that chain's head. */
  truth(chain: number, vault: `0x${string}`): ReturnType<typeof valueAt>;
}

export async function startChainPipeline(
  anvil: AnvilInstance,
  stack: ReferenceStack,
  label: string,
  indexerOptions: Pick<IndexerConfig, 'mark' | 'heartbeats'> = {},
): Promise<ChainPipeline> {
  const p = await startChainsPipeline([{ anvil, stack }], label, indexerOptions);
  const [indexer] = p.indexers as [Indexer];
  return { ...p, indexer, truth: (vault) => p.truth(0, vault) };
}

export async function startChainsPipeline(
  chains: readonly FollowedChain[],
  label: string,
  indexerOptions: Pick<IndexerConfig, 'mark' | 'heartbeats'> = {},
): Promise<ChainsPipeline> {
  const log = createLogger({ name: label, level: 'warn' });
  const topic = uniqueTopic(label);
  const db = await createTestDatabase(label);
  const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: label });
  await admin.ensureTopic({ topic, partitions: 4 });
  await admin.close();
  const indexers: Indexer[] = [];
  for (const { anvil, stack } of chains) {
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
    indexers.push(indexer);
  }
  const projector = createProjector({
    kafka: { brokers: kafkaBrokers(), topic, consumerGroup: label },
    databaseUrl: db.writerUrl,
    schema: db.schema,
    migrate: false,
    logger: log,
  });
  await projector.start();
  const api = await startReader(db);
  const clientOf = (chain: number) => {
    const c = chains[chain];
    if (!c) throw new Error(`no chain ${chain} in this pipeline`);
    return c.stack.clients.publicClient;
  };
  return {
    db,
    indexers,
    projector,
    api,
    topic,
    async settle() {
      for (const [i, indexer] of indexers.entries())
        await indexer.waitFor(Number(await clientOf(i).getBlockNumber()));
      await projector.caughtUp({ timeoutMs: 60_000, pollMs: 50 });
    },
    async truth(chain, vault) {
      const client = clientOf(chain);
      return valueAt(client, vault, await client.getBlockNumber());
    },
    async stop() {
      await api.stop();
      await projector.stop();
      for (const indexer of indexers) await indexer.stop();
      await db.drop();
    },
  };
}
