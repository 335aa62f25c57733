import { testTokenAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  type DemoResult,
  deployReferenceStack,
  devChain,
  giftPosition,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
  write,
} from '@vault-yield/devstack/chain';
import { decodeRecord, type VaultRecord } from '@vault-yield/domain';
import { createIndexer, type Indexer, republishVault } from '@vault-yield/indexer';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { readMessages, silent } from '@vault-yield/test-kit/indexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run.js';
import { startRpcProxy } from '../faults/rpc-proxy.js';
import {
  checksums,
  createTopic,
  deleteTopics,
  projector,
  publish,
  query,
  VAULT_TABLES,
} from '../projector/support.js';

const HEARTBEATS = { default: 3600, byFeed: {} };

/**
 * `vault-yield republish` against real parts: the indexer indexes the demo scenario on anvil;
 * re-deriving a vault's records from the chain gives the published bytes, numbers included; a
 * projection of the log without one record holds that vault; republishing the missing range
 * resumes it, and the tables equal a clean run's.
 */
describe('republish a vault range (anvil, Kafka, Postgres)', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let demo: DemoResult;
  let db: TestDatabase;
  let indexer: Indexer;
  const dbs: TestDatabase[] = [];
  const topic = uniqueTopic('indexer-republish');
  const brokers = () => kafkaBrokers();
  /** The live log's messages by vault, in log order. */
  const byVault = new Map<string, { value: Buffer; record: VaultRecord }[]>();

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    demo = await playDemoScenario(stack);
    // Tokens sent straight to each vault and liquidity minted for it by someone else: records the
    // indexer derives from a token's Transfer and a pool's Mint, not from a vault event.
    for (const dv of demo.vaults) {
      const pool = stack.pools.find((x) => x.address.toLowerCase() === dv.pool.toLowerCase())!;
      await write(stack.clients, stack.accounts.deployer, pool.token1.address, testTokenAbi, 'mint', [
        dv.address,
        10n ** BigInt(pool.token1.decimals),
      ]);
      await giftPosition(stack, { address: dv.address, pool }, 1_000, { halfWidth: 600 });
    }
    const head = Number(await stack.clients.publicClient.getBlockNumber());
    db = await createTestDatabase('indexer_republish');
    indexer = createIndexer({
      rpcUrl: anvil.rpcUrl,
      factory: stack.factory,
      kafka: { brokers: brokers(), topic, partitions: 4 },
      databaseUrl: db.writerUrl,
      schema: db.schema,
      pollIntervalMs: 50,
      maxBlockRange: 7,
      concurrency: 3,
      mark: { intervalBlocks: 3, minIntervalMs: 0 },
      heartbeats: HEARTBEATS,
      logger: silent,
    });
    await indexer.start();
    await indexer.waitFor(head);
    await indexer.stop();
    for (const m of await readMessages(brokers(), topic)) {
      const d = decodeRecord(m.value);
      if (!d.ok || !m.value) throw new Error(`undecodable record: ${d.ok ? 'empty' : d.reason}`);
      const list = byVault.get(d.record.vault) ?? [];
      byVault.set(d.record.vault, list);
      list.push({ value: m.value, record: d.record });
    }
  }, 240_000);

  afterAll(async () => {
    await indexer?.stop();
    await anvil?.stop();
    await db?.drop();
    for (const d of dbs) await d.drop();
    await deleteTopics();
  });

  const busiest = () =>
    [...byVault.entries()].sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1))[0]!;

  const republish = (
    vault: string,
    target: string,
    fromBlock: number,
    toBlock?: number,
    rpcUrl = anvil.rpcUrl,
  ) =>
    republishVault({
      rpcUrl,
      chainId: anvil.chainId,
      factory: stack.factory,
      databaseUrl: db.writerUrl,
      schema: db.schema,
      kafka: { brokers: brokers(), topic: target },
      heartbeats: HEARTBEATS,
      vault: vault as `0x${string}`,
      fromBlock,
      toBlock,
      logger: silent,
    });

  it('re-derives every record of a vault, byte for byte, with the numbers it was published with', async () => {
    const [vault, live] = busiest();
    expect(live.length).toBeGreaterThan(5);
    // records of a token's Transfer and a pool's Mint are re-derived too
    expect(live.map((m) => m.record.type)).toEqual(
      expect.arrayContaining(['transfer.received', 'position.received']),
    );
    expect(live.map((m) => m.record.seq)).toEqual(live.map((_m, i) => i + 1));
    const copy = uniqueTopic('indexer-republish-copy');
    await createTopic(brokers(), copy, 4);
    const result = await republish(vault, copy, 0);
    expect(result).toMatchObject({
      records: live.length,
      firstSeq: 1,
      lastSeq: live.length,
      notRederived: [],
    });
    const again = (await readMessages(brokers(), copy)).map((m) => m.value?.toString('hex'));
    expect(again).toEqual(live.map((m) => m.value.toString('hex')));
  });

  it("the CLI publishes where the indexer publishes (its checkpoint's topic): KAFKA_TOPIC naming another is refused in one line", async () => {
    const [vault, list] = busiest();
    const from = list[0]!.record.blockNumber;
    const env = {
      DATABASE_URL: db.writerUrl,
      PROJECTION_SCHEMA: db.schema,
      KAFKA_BROKERS: brokers().join(','),
      RPC_URL: anvil.rpcUrl,
      FACTORY_ADDRESS: stack.factory,
      MARK_INTERVAL_BLOCKS: '3',
    };
    const args = [
      'republish',
      '--vault',
      vault,
      '--from-block',
      String(from),
      '--to-block',
      String(from),
      '--dry-run',
    ];
    // An environment left from before a reindex names the old log: refused, nothing published.
    const stale = uniqueTopic('republish-stale');
    const refused = await runCli(args, { ...env, KAFKA_TOPIC: stale });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual([
      `vault-yield republish: KAFKA_TOPIC=${stale}, but the indexer of ${db.schema} publishes to ${topic}: unset KAFKA_TOPIC or set it to ${topic} (republish refused, nothing published)`,
    ]);
    // Unset: the checkpoint's topic (the default, vault-records, is no topic here: it would fail).
    const ok = await runCli([...args, '--json'], env, 120_000);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ vault, published: false });
  }, 180_000);

  it('a projection without one record holds the vault; republishing the missing range resumes it to a clean run', async () => {
    const [vault, live] = busiest();
    // The live log's bytes, as the indexer wrote them (the republished records are the same bytes).
    const all = [...byVault.values()].flat();
    const lost = live[Math.floor(live.length / 2)]!;
    const raw = (list: typeof all) => list.map((m) => ({ key: m.record.vault, value: m.value }));
    const clean = uniqueTopic('indexer-republish-clean');
    const gapped = uniqueTopic('indexer-republish-gapped');
    await createTopic(brokers(), clean, 4);
    await createTopic(brokers(), gapped, 4);
    await publish(brokers(), clean, [], raw(all));
    await publish(brokers(), gapped, [], raw(all.filter((m) => m !== lost)));

    const cleanDb = await createTestDatabase('republish_clean');
    dbs.push(cleanDb);
    const c = projector({
      brokers: brokers(),
      url: cleanDb.writerUrl,
      schema: cleanDb.schema,
      topic: clean,
      group: 'c',
    });
    await c.start();
    await c.caughtUp();
    await c.stop();

    const run = await createTestDatabase('republish_run');
    dbs.push(run);
    const p = projector({
      brokers: brokers(),
      url: run.writerUrl,
      schema: run.schema,
      topic: gapped,
      group: 'g',
    });
    await p.start();
    await p.caughtUp();
    const [held] = await query<{
      held: boolean;
      gap: { fromBlock: number; toBlock: number; missingFrom: number };
    }>(
      run.writerUrl,
      run.schema,
      `select held, snapshot->'behind'->'gap' as gap from vault_snapshot where vault = $1`,
      [vault],
    );
    expect(held?.held).toBe(true);
    expect(held?.gap.missingFrom).toBe(lost.record.seq);

    // What `vault-yield status` tells the operator to run.
    const result = await republish(vault, gapped, held!.gap.fromBlock, held!.gap.toBlock);
    expect(result.records).toBeGreaterThanOrEqual(1);
    await p.caughtUp();
    await p.stop();
    expect(await query(run.writerUrl, run.schema, 'select 1 from dead_letters')).toEqual([]);
    expect(await checksums(run.writerUrl, run.schema, [...VAULT_TABLES, 'dead_letters'])).toEqual(
      await checksums(cleanDb.writerUrl, cleanDb.schema, [...VAULT_TABLES, 'dead_letters']),
    );
  });

  // Last: it reorganises the chain under the other tests' records.
  it('a reorg between its block check and its valuation read: republish refuses, it never values another block under the old hash', async () => {
    const [vault, live] = busiest();
    const block = live.at(-1)!.record.blockNumber;
    const head = Number(await stack.clients.publicClient.getBlockNumber());
    const dev = devChain(anvil.rpcUrl);
    // The headers are checked by then (they come first); the block's valuation read comes next.
    let reorged = false;
    const proxy = await startRpcProxy({
      upstream: anvil.rpcUrl,
      maxLogsRange: Number.MAX_SAFE_INTEGER,
      fault: (_n, calls) =>
        !reorged && calls.some((c) => c.method === 'eth_call')
          ? {
              kind: 'before',
              run: async () => {
                reorged = true;
                await dev.reorg(head - block + 1);
              },
            }
          : null,
    });
    const target = uniqueTopic('indexer-republish-reorged');
    await createTopic(brokers(), target, 4);
    try {
      await expect(republish(vault, target, block, block, proxy.url)).rejects.toThrow(
        new RegExp(`block ${block} is no longer 0x[0-9a-f]{64} \\(a reorg while it was valued\\)`),
      );
    } finally {
      await proxy.close();
    }
    expect(reorged).toBe(true);
    const now = await stack.clients.publicClient.getBlock({ blockNumber: BigInt(block) });
    expect(now.hash).not.toBe(live.at(-1)!.record.blockHash);
    expect(await readMessages(brokers(), target)).toEqual([]);
  });
});
