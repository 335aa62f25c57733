import { vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  type CuttableProxy,
  createVault,
  cuttableProxy,
  type DevChain,
  deployReferenceStack,
  devChain,
  type ReferenceStack,
  startAnvil,
  type TrackedVault,
  write,
} from '@vault-yield/devstack/chain';
import { type VaultRecord, vaultId } from '@vault-yield/domain';
import { createIndexer, type Indexer, type IndexerConfig } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { createPgPool, migrate } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import {
  expectedRecords,
  normalized,
  readTopic,
  recordId,
  runIndexerMain,
  silent,
} from '@vault-yield/test-kit/indexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Each chain indexed on its own (#45, DESIGN §8): two anvils (chain ids 31337 and 31338, the same
 * deployer, so the factory and the vault have the same address on both), one indexer per chain,
 * ONE Postgres schema and ONE topic. Chain B's node goes down (a TCP proxy in front of it is cut):
 * chain A's blocks keep being published as fast as with B up; B's link back: B catches up with
 * nothing lost. A reorg on chain A: only A's vaults get a revert.
 */

const A = 31337;
const B = 31338;
/** A block of chain A published (Kafka acked, checkpointed) within this while B is down. B's retries back off for seconds. */
const FRESH_MS = 2_000;
/** B stays down at least this long: past its first retries, into its step backoff. */
const OUTAGE_MS = 4_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const accrueCalldata = (amount: bigint) => `0xe1a472b9${amount.toString(16).padStart(64, '0')}`;

/** Drops every record a later revert voids, as a projector does (per vault id). */
function effective(records: readonly VaultRecord[]): VaultRecord[] {
  const out: VaultRecord[] = [];
  for (const r of records) {
    if (r.type !== 'revert') {
      out.push(r);
      continue;
    }
    const orphaned = new Set(r.payload.orphanedBlockHashes);
    for (let i = out.length - 1; i >= 0; i--) {
      const o = out[i]!;
      if (
        o.chainId === r.chainId &&
        o.vault === r.vault &&
        o.blockNumber >= r.payload.fromBlock &&
        orphaned.has(o.blockHash)
      )
        out.splice(i, 1);
    }
  }
  return out;
}

/** Per vault id, the numbers on the topic are 1..n without a gap; a number seen twice (a step retried) is the same record. */
function expectContiguousSeqs(records: readonly VaultRecord[]): void {
  const byId = new Map<string, Map<number, string>>();
  for (const r of records) {
    const id = vaultId(r.chainId, r.vault);
    const seqs = byId.get(id) ?? new Map<number, string>();
    const seen = seqs.get(r.seq!);
    if (seen !== undefined)
      expect(normalized(r), `${id} seq ${r.seq} published twice, differently`).toBe(seen);
    seqs.set(r.seq!, normalized(r));
    byId.set(id, seqs);
  }
  for (const [id, seqs] of byId)
    expect(
      [...seqs.keys()].sort((x, y) => x - y),
      id,
    ).toEqual([...seqs.keys()].map((_s, i) => i + 1));
}

describe('two chains on one topic and one schema, each indexed on its own', () => {
  let anvilA: AnvilInstance;
  let anvilB: AnvilInstance;
  let devA: DevChain;
  let devB: DevChain;
  let stackA: ReferenceStack;
  let stackB: ReferenceStack;
  let vaultA: TrackedVault;
  let vaultB: TrackedVault;
  let proxyB: CuttableProxy;
  let db: TestDatabase;
  let indexerA: Indexer;
  let indexerB: Indexer;
  const topic = uniqueTopic('chains-isolation');
  const processTopic = uniqueTopic('chains-processes');

  const head = async (dev: DevChain) => {
    const n = Number(await dev.blockNumber());
    const b = await dev.rpc.call<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);
    return { number: n, hash: b.hash };
  };
  /** The indexer's checkpoint is the node's head (number and hash). */
  const caughtUp = async (indexer: Indexer, dev: DevChain, ms = 60_000) => {
    const end = Date.now() + ms;
    for (;;) {
      const h = await head(dev);
      const c = indexer.status().checkpoint;
      if (c.blockNumber === h.number && c.blockHash === h.hash) return h;
      if (Date.now() > end)
        throw new Error(`indexer stuck at ${JSON.stringify(c)}, head ${JSON.stringify(h)}`);
      await sleep(20);
    }
  };
  const accrue = (stack: ReferenceStack, vault: TrackedVault, amount: bigint) =>
    write(stack.clients, stack.accounts.agent, vault.address, vaultAbi, 'accrueRewards', [amount]);
  /** ms from a block of chain A mined to its records acked by Kafka and checkpointed. */
  const publishLatencyA = async (amount: bigint) => {
    const receipt = await accrue(stackA, vaultA, amount);
    const t0 = performance.now();
    await indexerA.waitFor(Number(receipt.blockNumber));
    return performance.now() - t0;
  };
  const records = async (from = topic) => (await readTopic(kafkaBrokers(), from)).map((t) => t.record);
  const ofChain = (rs: readonly VaultRecord[], chainId: number) => rs.filter((r) => r.chainId === chainId);
  /** The chain's records as the projector keeps them (reverts applied, no marks), by identity. */
  const kept = (rs: readonly VaultRecord[]) =>
    [
      ...new Map(
        effective(rs)
          .filter((r) => r.type !== 'mark')
          .map((r) => [recordId(r), normalized(r)]),
      ).values(),
    ].sort();
  const expected = async (anvil: AnvilInstance, stack: ReferenceStack, to: number) =>
    (await expectedRecords(anvil.rpcUrl, anvil.chainId, stack.factory, Number(stack.deploymentBlock), to))
      .map(normalized)
      .sort();

  const config = (rpcUrl: string, factory: string, chainId?: number): IndexerConfig => ({
    rpcUrl,
    chainId,
    factory,
    kafka: { brokers: kafkaBrokers(), topic, partitions: 4 },
    databaseUrl: db.writerUrl,
    schema: db.schema,
    pollIntervalMs: 50,
    confirmations: 0,
    reorgWindow: 16,
    logger: silent,
  });

  beforeAll(async () => {
    [anvilA, anvilB] = await Promise.all([startAnvil({ chainId: A }), startAnvil({ chainId: B })]);
    devA = devChain(anvilA.rpcUrl);
    devB = devChain(anvilB.rpcUrl);
    stackA = await deployReferenceStack(anvilA.rpcUrl);
    stackB = await deployReferenceStack(anvilB.rpcUrl);
    vaultA = await createVault(stackA, stackA.accounts.owners[0]!, stackA.pools[0]!, 'two-chains');
    vaultB = await createVault(stackB, stackB.accounts.owners[0]!, stackB.pools[0]!, 'two-chains');
    // Different histories under the same address.
    await accrue(stackA, vaultA, 111n);
    await accrue(stackB, vaultB, 222n);
    await accrue(stackB, vaultB, 333n);
    db = await createTestDatabase('chains_isolation');
    proxyB = await cuttableProxy(anvilB.rpcUrl);
    indexerA = createIndexer(config(anvilA.rpcUrl, stackA.factory, A));
    // B's chain id is read from its node (through the proxy).
    indexerB = createIndexer(config(proxyB.url, stackB.factory));
    await Promise.all([indexerA.start(), indexerB.start()]);
    await Promise.all([caughtUp(indexerA, devA), caughtUp(indexerB, devB)]);
  }, 180_000);

  afterAll(async () => {
    await indexerA?.stop();
    await indexerB?.stop();
    await proxyB?.close();
    await anvilA?.stop();
    await anvilB?.stop();
    await db?.drop();
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'chains-isolation-test' });
    for (const t of [topic, processTopic]) await admin.deleteTopic(t).catch(() => {});
    await admin.close();
  });

  it('share the schema and the topic without colliding: a checkpoint row each, each its own records under the same address', async () => {
    expect(stackB.factory).toBe(stackA.factory);
    expect(vaultB.address).toBe(vaultA.address);
    expect(indexerA.status().chainId).toBe(A);
    expect(indexerB.status().chainId).toBe(B);
    const pool = createPgPool({
      url: db.writerUrl,
      schema: db.schema,
      applicationName: 'chains-test',
      max: 1,
    });
    try {
      const { rows } = await pool.query<{ chain_id: number; block_number: string; topic: string }>(
        'select chain_id, block_number, topic from indexer_checkpoint order by chain_id',
      );
      expect(rows.map((r) => [r.chain_id, Number(r.block_number), r.topic])).toEqual([
        [A, indexerA.status().checkpoint.blockNumber, topic],
        [B, indexerB.status().checkpoint.blockNumber, topic],
      ]);
      const vaults = await pool.query<{ chain_id: number; vault: string }>(
        'select chain_id, vault from indexer_vaults order by chain_id',
      );
      expect(vaults.rows).toEqual([
        { chain_id: A, vault: vaultA.address },
        { chain_id: B, vault: vaultB.address },
      ]);
    } finally {
      await pool.end();
    }
    const rs = await records();
    const headA = (await head(devA)).number;
    const headB = (await head(devB)).number;
    expect(kept(ofChain(rs, A))).toEqual(await expected(anvilA, stackA, headA));
    expect(kept(ofChain(rs, B))).toEqual(await expected(anvilB, stackB, headB));
    const amounts = (chainId: number) =>
      ofChain(rs, chainId)
        .filter((r) => r.type === 'rewards.accrued')
        .map((r) => (r.payload as { amount: string }).amount);
    expect(amounts(A)).toEqual(['111']);
    expect(amounts(B)).toEqual(['222', '333']);
    expectContiguousSeqs(rs);
    // Each indexer's series carry its chain.
    expect(await indexerA.metrics.registry.metrics()).toMatch(
      /^indexer_checkpoint_block\{chain="31337"\} \d+$/m,
    );
    expect(await indexerB.metrics.registry.metrics()).toMatch(
      /^indexer_checkpoint_block\{chain="31338"\} \d+$/m,
    );
  });

  it("chain B's node down: chain A's blocks are published as fast as before; B back: it catches up with nothing lost", async () => {
    // Chain A's freshness with B up.
    const before: number[] = [];
    for (let i = 0; i < 3; i++) before.push(await publishLatencyA(BigInt(1_000 + i)));

    const checkpointB = indexerB.status().checkpoint.blockNumber;
    const cutAt = performance.now();
    proxyB.cut();
    // Chain B goes on without its indexer seeing it.
    for (let i = 0; i < 3; i++) await accrue(stackB, vaultB, BigInt(5_000 + i));
    await devB.mine(4);
    await sleep(300); // B's indexer has met the dead link

    const during: number[] = [];
    for (let i = 0; i < 6; i++) during.push(await publishLatencyA(BigInt(2_000 + i)));
    await sleep(Math.max(0, OUTAGE_MS - (performance.now() - cutAt)));
    expect(
      Math.max(...during),
      `A's latencies with B down: ${during.map(Math.round)} (B up: ${before.map(Math.round)})`,
    ).toBeLessThan(FRESH_MS);
    // B has not moved, and says why in its chain's series; A saw no RPC error.
    expect(indexerB.status().checkpoint.blockNumber).toBe(checkpointB);
    expect(await indexerB.metrics.registry.metrics()).toMatch(
      /^indexer_rpc_errors_total\{kind="[a-z-]+",chain="31338"\} [1-9]/m,
    );
    expect(await indexerA.metrics.registry.metrics()).not.toMatch(/^indexer_rpc_errors_total\{/m);

    if (process.env.TEST_LOG_LATENCY)
      console.log(`A: B up ${before.map(Math.round)} ms; B down ${during.map(Math.round)} ms`);
    proxyB.restore();
    const hB = await caughtUp(indexerB, devB, 90_000);
    expect(hB.number).toBe(checkpointB + 7); // 3 transactions and 4 empty blocks while it was down
    const hA = await caughtUp(indexerA, devA);

    const rs = await records();
    expect(kept(ofChain(rs, B))).toEqual(await expected(anvilB, stackB, hB.number));
    expect(kept(ofChain(rs, A))).toEqual(await expected(anvilA, stackA, hA.number));
    expectContiguousSeqs(rs);
  });

  it('a reorg on chain A reverts only chain A: B publishes nothing, its checkpoint stays', async () => {
    const rsBefore = await records();
    const bBefore = ofChain(rsBefore, B);
    const checkpointB = indexerB.status().checkpoint;
    await accrue(stackA, vaultA, 3_000n);
    await accrue(stackA, vaultA, 3_001n);
    const tip = await caughtUp(indexerA, devA);
    const orphaned: string[] = [];
    for (const n of [tip.number - 1, tip.number])
      orphaned.push(
        (await devA.rpc.call<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash,
      );
    await devA.reorg(2, [
      [{ from: stackA.accounts.agent, to: vaultA.address, data: accrueCalldata(7_777n), gas: '0x30d40' }, 0],
    ]);
    const after = await caughtUp(indexerA, devA);
    expect(after.hash).not.toBe(tip.hash);
    await sleep(500); // B would have published by now, were it touched

    const rs = await records();
    const reverts = rs.filter((r) => r.type === 'revert');
    expect(reverts.length).toBeGreaterThan(0);
    expect(reverts.every((r) => r.chainId === A)).toBe(true);
    expect(
      reverts.some(
        (r) => r.type === 'revert' && r.payload.orphanedBlockHashes.some((h) => orphaned.includes(h)),
      ),
    ).toBe(true);
    // Chain B: not one record more, the same checkpoint.
    expect(ofChain(rs, B).map(normalized)).toEqual(bBefore.map(normalized));
    expect(indexerB.status().checkpoint).toEqual(checkpointB);
    // Chain A's records, reverts applied, are its canonical chain's; B's are B's.
    expect(kept(ofChain(rs, A))).toEqual(await expected(anvilA, stackA, after.number));
    expect(kept(ofChain(rs, B))).toEqual(await expected(anvilB, stackB, checkpointB.blockNumber));
    expectContiguousSeqs(rs);
  });
  it('as deployed, one process per chain: two indexer processes (RPC_URL, CHAIN_ID, FACTORY_ADDRESS, METRICS_PORT each) on one schema and topic at once', async () => {
    const schema = 'chains_processes';
    const pool = createPgPool({ url: db.writerUrl, applicationName: 'chains-test', max: 1 });
    try {
      await migrate(pool, schema);
      const [endA, endB] = [(await head(devA)).number, (await head(devB)).number];
      const common = {
        KAFKA_BROKERS: kafkaBrokers().join(','),
        KAFKA_TOPIC: processTopic,
        KAFKA_PARTITIONS: '4',
        DATABASE_URL: db.writerUrl,
        PROJECTION_SCHEMA: schema,
        POLL_INTERVAL_MS: '50',
        LOG_LEVEL: 'error',
      };
      const [a, b] = await Promise.all([
        runIndexerMain({
          ...common,
          RPC_URL: anvilA.rpcUrl,
          CHAIN_ID: String(A),
          FACTORY_ADDRESS: stackA.factory,
          END_BLOCK: String(endA),
          METRICS_PORT: '0',
        }),
        runIndexerMain({
          ...common,
          RPC_URL: anvilB.rpcUrl,
          CHAIN_ID: String(B),
          FACTORY_ADDRESS: stackB.factory,
          END_BLOCK: String(endB),
          METRICS_PORT: '0',
        }),
      ]);
      expect(a.code, a.stderr).toBe(0);
      expect(b.code, b.stderr).toBe(0);
      const { rows } = await pool.query<{ chain_id: number; block_number: string }>(
        `select chain_id, block_number from ${schema}.indexer_checkpoint order by chain_id`,
      );
      expect(rows.map((r) => [r.chain_id, Number(r.block_number)])).toEqual([
        [A, endA],
        [B, endB],
      ]);
      const rs = await records(processTopic);
      expect(kept(ofChain(rs, A))).toEqual(await expected(anvilA, stackA, endA));
      expect(kept(ofChain(rs, B))).toEqual(await expected(anvilB, stackB, endB));
      expectContiguousSeqs(rs);
    } finally {
      await pool.end();
    }
  }, 120_000);
});
