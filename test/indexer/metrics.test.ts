import { createServer } from 'node:net';
import {
  type AnvilInstance,
  createVault,
  deployReferenceStack,
  devChain,
  type ReferenceStack,
  startAnvil,
} from '@vault-yield/devstack/chain';
import { createIndexer, type Indexer } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { silent } from '@vault-yield/test-kit/indexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/** A value of one series in a /metrics text (0 when absent). */
const sample = (text: string, series: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

/**
 * The indexer's metrics on a real chain: RPC calls counted and timed by method where the client
 * counts them, lens reads counted, the process's default metrics served unprefixed on METRICS_PORT.
 */
describe('indexer metrics', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let db: TestDatabase;
  let indexer: Indexer;
  let port: number;
  const topic = uniqueTopic('indexer-metrics');

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    await createVault(stack, stack.accounts.owners[0]!, stack.pools[0]!, 'metrics');
    db = await createTestDatabase('indexer_metrics');
    port = await freePort();
    indexer = createIndexer({
      rpcUrl: anvil.rpcUrl,
      factory: stack.factory,
      kafka: { brokers: kafkaBrokers(), topic, partitions: 1 },
      databaseUrl: db.writerUrl,
      schema: db.schema,
      pollIntervalMs: 20,
      maxBlockRange: 4,
      logger: silent,
      metricsPort: port,
    });
    await indexer.start();
    const head = Number(await devChain(anvil.rpcUrl).rpc.call<string>('eth_blockNumber', []));
    await indexer.waitFor(head);
  }, 120_000);

  afterAll(async () => {
    await indexer?.stop();
    await anvil?.stop();
    await db?.drop();
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'indexer-metrics-test' });
    await admin.deleteTopic(topic).catch(() => {});
    await admin.close();
  });

  it('serves counters and a latency histogram of RPC calls by method, and the process metrics', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('# TYPE indexer_rpc_calls_total counter');
    expect(text).toContain('# TYPE indexer_rpc_duration_seconds histogram');
    expect(text).toContain('# TYPE indexer_valuation_calls_total counter');
    // No CHAIN_ID: the chain is the node's, and the eth_chainId read that told it is counted too.
    for (const method of ['eth_chainId', 'eth_blockNumber', 'eth_getLogs', 'eth_call']) {
      expect(
        sample(text, `indexer_rpc_calls_total{method="${method}",chain="31337"}`),
        method,
      ).toBeGreaterThan(0);
      expect(
        sample(text, `indexer_rpc_duration_seconds_count{method="${method}",chain="31337"}`),
        method,
      ).toBeGreaterThan(0);
      expect(
        sample(text, `indexer_rpc_duration_seconds_sum{method="${method}",chain="31337"}`),
        method,
      ).toBeGreaterThan(0);
    }
    // The vault's creation is a record, valued with a lens read.
    expect(sample(text, 'indexer_valuation_calls_total{chain="31337"}')).toBeGreaterThan(0);
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    expect(text).not.toMatch(/^(indexer|reader)_(process|nodejs)_/m);
  });

  it('counts every call the client counts (the same calls on the wire, the chain id read included), and every lens read', async () => {
    await indexer.stop(); // nothing moves any more
    const text = await indexer.metrics.registry.metrics();
    const byMethod = [
      ...text.matchAll(/^indexer_rpc_calls_total\{method="([^"]+)",chain="31337"\} (\d+)$/gm),
    ];
    const total = byMethod.reduce((a, m) => a + Number(m[2]), 0);
    expect(total).toBeGreaterThan(0);
    expect(total).toBe(indexer.status().rpcCalls);
    expect(sample(text, 'indexer_valuation_calls_total{chain="31337"}')).toBe(
      indexer.status().valuationCalls,
    );
  });
});
