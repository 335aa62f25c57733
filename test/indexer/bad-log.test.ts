import { eventTopics } from '@vault-yield/chain';
import {
  type AnvilInstance,
  createVault,
  deployReferenceStack,
  devChain,
  type ReferenceStack,
  startAnvil,
} from '@vault-yield/devstack/chain';
import { BadLogError, createIndexer, type Indexer } from '@vault-yield/indexer';
import { createIndexerStore, createPgPool } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { readTopic, silent } from '@vault-yield/test-kit/indexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Runtime code that emits LOG1(topic0 = Vault.Deposited, data = 1 byte) on any call: a log from a
 * registered vault address with the right topic0 and malformed topics/data (Deposited has two
 * indexed arguments and a uint256 of data). PUSH32 topic, PUSH1 1, PUSH1 0, LOG1, STOP.
 */
const malformedEmitter = (topic0: string) => `0x7f${topic0.slice(2)}60016000a100`;

describe('a vault log that does not decode', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let db: TestDatabase;
  let indexer: Indexer;
  let badBlock = 0;
  const topic = uniqueTopic('indexer-badlog');

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    const good = await createVault(stack, stack.accounts.owners[0]!, stack.pools[0]!, 'good');
    const bad = await createVault(stack, stack.accounts.owners[1]!, stack.pools[0]!, 'bad');
    const dev = devChain(anvil.rpcUrl);
    const deposited = eventTopics.vault[0]!; // Deposited(address indexed, address indexed, uint256)
    // Swap the vault's code for the emitter for one transaction, then put the Vault back. (anvil's
    // setCode also rewrites the latest block's state: mine one first so the creation block keeps
    // the real Vault.)
    await dev.mine(1);
    const original = await dev.rpc.call<string>('eth_getCode', [bad.address, 'latest']);
    await dev.rpc.call('anvil_setCode', [bad.address, malformedEmitter(deposited)]);
    const tx = await dev.rpc.call<string>('eth_sendTransaction', [
      { from: stack.accounts.agent, to: bad.address, data: '0x', gas: '0x30d40' },
    ]);
    // anvil mines an automined transaction just after answering eth_sendTransaction: poll.
    let receipt: { blockNumber: string; logs: unknown[] } | null = null;
    for (let i = 0; i < 200 && !receipt; i++) {
      receipt = await dev.rpc.call<{ blockNumber: string; logs: unknown[] } | null>(
        'eth_getTransactionReceipt',
        [tx],
      );
      if (!receipt) await new Promise((r) => setTimeout(r, 25));
    }
    if (!receipt) throw new Error(`no receipt for ${tx}`);
    expect(receipt.logs).toHaveLength(1);
    badBlock = Number(BigInt(receipt.blockNumber));
    await dev.rpc.call('anvil_setCode', [bad.address, original]);
    await createVault(stack, stack.accounts.owners[2]!, stack.pools[0]!, 'after');
    void good;

    db = await createTestDatabase('indexer_badlog');
    indexer = createIndexer({
      rpcUrl: anvil.rpcUrl,
      factory: stack.factory,
      kafka: { brokers: kafkaBrokers(), topic, partitions: 2 },
      databaseUrl: db.writerUrl,
      schema: db.schema,
      pollIntervalMs: 20,
      maxBlockRange: 2,
      logger: silent,
    });
    await indexer.start();
  }, 120_000);

  afterAll(async () => {
    await indexer?.stop();
    await anvil?.stop();
    await db?.drop();
  });

  it('halts the indexer with an error naming the log', async () => {
    await expect(indexer.done).rejects.toBeInstanceOf(BadLogError);
    await expect(indexer.done).rejects.toThrow(
      new RegExp(`in block ${badBlock} .*does not decode: ABI decode failed`),
    );
  });

  it('never checkpoints or publishes past the bad log', async () => {
    await indexer.done.catch(() => {});
    expect(indexer.status().checkpoint.blockNumber).toBeLessThan(badBlock);
    const records = (await readTopic(kafkaBrokers(), topic)).map((t) => t.record);
    expect(records.every((r) => r.blockNumber < badBlock)).toBe(true);
    expect(records.filter((r) => r.type === 'vault.created')).toHaveLength(2);
  });

  it('records the log in indexer_bad_logs and counts it', async () => {
    await indexer.done.catch(() => {});
    const pool = createPgPool({
      url: db.writerUrl,
      schema: db.schema,
      applicationName: 'badlog-test',
      max: 1,
    });
    try {
      const rows = await createIndexerStore(pool).badLogs(anvil.chainId);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.blockNumber).toBe(badBlock);
      expect(rows[0]!.reason).toMatch(/ABI decode failed/);
    } finally {
      await pool.end();
    }
    const metrics = await indexer.metrics.registry.getSingleMetricAsString('indexer_bad_logs_total');
    expect(metrics).toMatch(/indexer_bad_logs_total\{chain="\d+"\} [1-9]/);
  });
});
