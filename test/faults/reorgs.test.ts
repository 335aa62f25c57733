import { LENS_ADDRESS } from '@vault-yield/chain';
import { vaultAbi, vaultFactoryAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  createVault,
  type DevChain,
  deployReferenceStack,
  devChain,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
  strategyId,
  type TrackedVault,
  write,
} from '@vault-yield/devstack/chain';
import type { VaultRecord } from '@vault-yield/domain';
import { createIndexer, type Indexer, type IndexerConfig, ReorgTooDeepError } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { contextReader, expectedRecords, normalized, readTopic, silent } from '@vault-yield/test-kit/indexer';
import { encodeFunctionData } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli/run.js';
import { checksums, projector, VAULT_TABLES } from '../projector/support.js';
import { startRpcProxy } from './rpc-proxy.js';
import { until } from './support.js';

/**
 * Reorgs the indexer meets on a real chain (anvil), Kafka and Postgres: one that happened while it
 * was down (found on restart), one during a backfill with CONFIRMATIONS > 0, one to a shorter
 * chain, and one deeper than its window — which halts it with what to do, after which the
 * documented recovery (`vault-yield reindex`) leaves the tables of a clean run.
 */

/** accrueRewards(uint256) calldata, replayed into replacement blocks by anvil_reorg. */
const accrueCalldata = (amount: bigint) => `0xe1a472b9${amount.toString(16).padStart(64, '0')}`;
const MARK_INTERVAL = 3;

/** Drops every record a later revert voids, as a projector does. */
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
      if (o.vault === r.vault && o.blockNumber >= r.payload.fromBlock && orphaned.has(o.blockHash))
        out.splice(i, 1);
    }
  }
  return out;
}

describe('reorgs the indexer meets', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let dev: DevChain;
  let vault: TrackedVault;
  const dbs: TestDatabase[] = [];
  const topics: string[] = [];
  const running: Indexer[] = [];

  beforeAll(async () => {
    anvil = await startAnvil();
    dev = devChain(anvil.rpcUrl);
    stack = await deployReferenceStack(anvil.rpcUrl);
    await playDemoScenario(stack);
    vault = await createVault(stack, stack.accounts.owners[3]!, stack.pools[0]!, 'reorgs');
  }, 180_000);
  afterAll(async () => {
    for (const i of running) await i.stop().catch(() => {});
    await anvil?.stop();
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'reorgs-test' });
    for (const t of topics) await admin.deleteTopic(t).catch(() => {});
    await admin.close();
    for (const db of dbs) await db.drop();
  });

  const head = async () => {
    const n = Number(await dev.blockNumber());
    const b = await dev.rpc.call<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);
    return { number: n, hash: b.hash };
  };
  const hashes = async (from: number, to: number) => {
    const out: string[] = [];
    for (let n = from; n <= to; n++)
      out.push(
        (await dev.rpc.call<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash,
      );
    return out;
  };
  /** The checkpoint is the head less `confirmations`, by number and hash. */
  const caughtUp = async (indexer: Indexer, confirmations = 0) =>
    until(async () => {
      const h = await head();
      const want = h.number - confirmations;
      const b = await dev.rpc.call<{ hash: string }>('eth_getBlockByNumber', [
        `0x${want.toString(16)}`,
        false,
      ]);
      const c = indexer.status().checkpoint;
      return c.blockNumber === want && c.blockHash === b.hash;
    }, 'the indexer at the head');
  const accrue = (amount: bigint) =>
    write(stack.clients, stack.accounts.agent, vault.address, vaultAbi, 'accrueRewards', [amount]);
  const replacement = (amount: bigint): [unknown, number] => [
    { from: stack.accounts.agent, to: vault.address, data: accrueCalldata(amount), gas: '0x30d40' },
    0,
  ];

  async function database(label: string) {
    const db = await createTestDatabase(`fault_reorg_${label}`);
    dbs.push(db);
    return db;
  }
  function indexer(db: TestDatabase, topic: string, extra: Partial<IndexerConfig> = {}): Indexer {
    const i = createIndexer({
      rpcUrl: anvil.rpcUrl,
      chainId: anvil.chainId,
      factory: stack.factory,
      startBlock: Number(stack.deploymentBlock),
      kafka: { brokers: kafkaBrokers(), topic, partitions: 4 },
      databaseUrl: db.writerUrl,
      schema: db.schema,
      pollIntervalMs: 20,
      reorgWindow: 16,
      mark: { intervalBlocks: MARK_INTERVAL, minIntervalMs: 0 },
      logger: silent,
      ...extra,
    });
    running.push(i);
    return i;
  }
  const newTopic = (label: string) => {
    const t = uniqueTopic(`fault-reorg-${label}`);
    topics.push(t);
    return t;
  };
  /** The topic, with its reverts applied, holds the chain's records up to `to` (marks aside). */
  async function expectCanonical(topic: string, to: number) {
    const records = (await readTopic(kafkaBrokers(), topic)).map((t) => t.record);
    const kept = effective(records).filter((r) => r.type !== 'mark');
    const want = await expectedRecords(
      anvil.rpcUrl,
      anvil.chainId,
      stack.factory,
      Number(stack.deploymentBlock),
      to,
    );
    const got = new Map(kept.map((r) => [`${r.blockHash}:${r.txHash}:${r.logIndex}`, normalized(r)]));
    expect([...got.values()].sort()).toEqual(want.map(normalized).sort());
    return records;
  }
  const revertsOf = (records: readonly VaultRecord[]) =>
    records.filter((r): r is Extract<VaultRecord, { type: 'revert' }> => r.type === 'revert');

  it('finds a reorg that happened while it was down on restart, and reverts it', async () => {
    const db = await database('down');
    const topic = newTopic('down');
    const a = indexer(db, topic);
    await a.start();
    for (let i = 0; i < 3; i++) await accrue(BigInt(100 + i));
    await caughtUp(a);
    await a.stop();
    const before = await head();
    const orphaned = await hashes(before.number - 2, before.number);
    // While it is down: the last 3 blocks replaced (another vault tx in the first), one more mined.
    await dev.reorg(3, [replacement(7001n)]);
    await accrue(104n);

    const b = indexer(db, topic);
    await b.start();
    await caughtUp(b);
    await b.stop();
    const records = await expectCanonical(topic, (await head()).number);
    const reverts = revertsOf(records).filter((r) => r.vault === vault.address);
    expect(reverts).toHaveLength(1);
    expect(reverts[0]!.payload.fromBlock).toBe(before.number - 2);
    expect(reverts[0]!.payload.orphanedBlockHashes).toEqual(orphaned);
  }, 120_000);

  /**
   * An RPC proxy in front of anvil that refuses the first valuation read at `ancestor` once armed
   * (by number or by hash): a lens call (override or creation code) naming that block.
   */
  async function refusingAncestorRead() {
    let ancestor = -1;
    let ancestorHash = '';
    let refused = 0;
    const atAncestor = (p: unknown) =>
      p === `0x${ancestor.toString(16)}` || (p as { blockHash?: string } | null)?.blockHash === ancestorHash;
    const lens = (c: { params?: unknown[] }) => {
      const to = (c.params?.[0] as { to?: string } | undefined)?.to;
      return to === undefined || to === LENS_ADDRESS;
    };
    const proxy = await startRpcProxy({
      upstream: anvil.rpcUrl,
      maxLogsRange: Number.MAX_SAFE_INTEGER,
      fault: (_n, calls) => {
        if (ancestor < 0 || refused > 0) return null;
        if (!calls.some((c) => c.method === 'eth_call' && lens(c) && atAncestor(c.params?.[1]))) return null;
        refused++;
        return {
          kind: 'error',
          code: -32602,
          message: 'invalid argument 1: the node cannot read that block now',
        };
      },
    });
    return {
      url: proxy.url,
      close: () => proxy.close(),
      refused: () => refused,
      /** Arms it for the block `depth` below the head (the ancestor of a reorg of that depth). */
      async arm(depth: number) {
        ancestor = (await head()).number - depth;
        ancestorHash = (await hashes(ancestor, ancestor))[0]!;
        return ancestor;
      },
    };
  }

  /** The vault's revert at `ancestor` carries the vault as it stood there, not at the head. */
  async function expectRevertAtAncestor(topic: string, ancestor: number) {
    const reverts = revertsOf((await readTopic(kafkaBrokers(), topic)).map((t) => t.record)).filter(
      (r) => r.vault === vault.address && r.blockNumber === ancestor,
    );
    expect(reverts).toHaveLength(1);
    const read = contextReader(anvil.rpcUrl, stack.factory);
    const atHead = await read(vault.address, (await head()).number);
    expect(reverts[0]!.context.holdings).not.toEqual(atHead.holdings);
    expect(reverts[0]!.context).toEqual(await read(vault.address, ancestor));
  }

  it('a revert carries the vault as it stood at the ancestor, read by its hash: a read that fails there is tried again, never replaced by the head', async () => {
    const db = await database('ancestor');
    const topic = newTopic('ancestor');
    const node = await refusingAncestorRead();
    let ancestor: number;
    try {
      const a = indexer(db, topic, { rpcUrl: node.url });
      await a.start();
      for (let i = 0; i < 3; i++) await accrue(BigInt(200 + i));
      await caughtUp(a);
      // While it runs: the last 3 blocks replaced (another vault tx in the first), one more
      // mined — the head holds other pending rewards than the ancestor.
      ancestor = await node.arm(3);
      await dev.reorg(3, [replacement(9001n)]);
      await accrue(105n);
      await caughtUp(a);
      await a.stop();
    } finally {
      await node.close();
    }
    expect(node.refused()).toBe(1);
    await expectRevertAtAncestor(topic, ancestor);
  }, 120_000);

  it('a read that fails while it checks for a reorg on restart is tried again, not a halt', async () => {
    const db = await database('ancestor_restart');
    const topic = newTopic('ancestor-restart');
    const a = indexer(db, topic);
    await a.start();
    for (let i = 0; i < 3; i++) await accrue(BigInt(300 + i));
    await caughtUp(a);
    await a.stop();
    // While it is down: the same reorg; the first read at the ancestor on restart is refused.
    const node = await refusingAncestorRead();
    const ancestor = await node.arm(3);
    await dev.reorg(3, [replacement(9002n)]);
    await accrue(106n);
    try {
      const b = indexer(db, topic, { rpcUrl: node.url });
      await b.start();
      // A halt fails the test at once, with its reason.
      await Promise.race([caughtUp(b), b.done]);
      await b.stop();
    } finally {
      await node.close();
    }
    expect(node.refused()).toBe(1);
    await expectRevertAtAncestor(topic, ancestor);
  }, 120_000);

  it('a vault born in an orphaned block, its creation replayed, found on restart: valued at the head read then, no halt', async () => {
    const db = await database('born');
    const topic = newTopic('born');
    const a = indexer(db, topic);
    await a.start();
    const pool = stack.pools[0]!;
    const owner = stack.accounts.owners[4]!;
    const born = await createVault(stack, owner, pool, 'born-orphaned');
    await accrue(400n);
    await caughtUp(a);
    await a.stop();
    // While it is down: its creation block and the one after replaced, the creation replayed
    // into the first (same factory nonce: same address), one more block mined.
    const create = encodeFunctionData({
      abi: vaultFactoryAbi,
      functionName: 'createVault',
      args: [
        owner,
        stack.accounts.agent,
        strategyId('born-orphaned'),
        pool.token0.address,
        pool.token1.address,
        pool.address,
        stack.tokens.rwd.address,
      ],
    });
    await dev.reorg(2, [[{ from: owner, to: stack.factory, data: create, gas: '0x989680' }, 0]]);
    await accrue(401n);
    const b = indexer(db, topic);
    await b.start();
    // A halt fails the test at once, with its reason.
    await Promise.race([caughtUp(b), b.done]);
    await b.stop();
    const records = await expectCanonical(topic, (await head()).number);
    expect(revertsOf(records).filter((r) => r.vault === born.address)).toHaveLength(1);
  }, 120_000);

  it('rides out reorgs during a backfill with CONFIRMATIONS > 0, never publishing past the head less them', async () => {
    const confirmations = 3;
    const db = await database('backfill');
    const topic = newTopic('backfill');
    // A long backfill, one block per range: it is still under way when the chain reorganises.
    await dev.mine(190);
    for (let k = 0; k < 10; k++) await accrue(BigInt(200 + k));
    const h = (await head()).number;
    const i = indexer(db, topic, { confirmations, maxBlockRange: 1, concurrency: 1 });
    await i.start();
    // Near its end (blocks it published, with records, in the kept window), the chain reorganises
    // twice: within the confirmations (nothing published there), then 14 deep (through published
    // blocks holding records).
    for (;;) {
      if (i.status().checkpoint.blockNumber >= h - confirmations - 6) break;
      await new Promise((r) => setTimeout(r, 2));
    }
    // Where it stands as the chain reorganises (read before: once the reorg is seen, the
    // checkpoint moves back below the fork, which a read after would race with).
    const at = i.status().checkpoint.blockNumber;
    await dev.reorg(2, [replacement(7002n)]);
    await dev.reorg(14, [replacement(7003n)]);
    expect(at).toBeLessThan(h - confirmations); // still backfilling…
    expect(at).toBeGreaterThanOrEqual(h - 9); // …and past the first replaced block with records
    await accrue(299n);
    await caughtUp(i, confirmations);
    const to = (await head()).number - confirmations;
    await i.stop();
    const records = await expectCanonical(topic, to);
    expect(Math.max(...records.map((r) => r.blockNumber))).toBeLessThanOrEqual(to);
    expect(revertsOf(records).length).toBeGreaterThan(0);
  }, 180_000);

  it('follows a reorg to a shorter chain: waits while blocks are only missing, reverts once one is replaced', async () => {
    const db = await database('shorter');
    const topic = newTopic('shorter');
    const i = indexer(db, topic);
    await i.start();
    await caughtUp(i);
    const snapshot = await dev.snapshot();
    const base = await head();
    for (let k = 0; k < 4; k++) await accrue(BigInt(300 + k));
    await caughtUp(i);
    const orphaned = await hashes(base.number + 1, base.number + 4);
    // Back to 4 blocks shorter: the kept blocks above are missing, none replaced yet.
    expect(await dev.revert(snapshot)).toBe(true);
    expect((await head()).number).toBe(base.number);
    await new Promise((r) => setTimeout(r, 1_500));
    let halted: unknown;
    i.done.catch((err: unknown) => {
      halted = err;
    });
    expect(halted).toBeUndefined();
    expect(revertsOf((await readTopic(kafkaBrokers(), topic)).map((t) => t.record))).toHaveLength(0);
    // One block mined in their place: the chain is now 3 blocks shorter than the indexed one.
    await accrue(399n);
    await caughtUp(i);
    await i.stop();
    const records = await expectCanonical(topic, base.number + 1);
    const reverts = revertsOf(records).filter((r) => r.vault === vault.address);
    expect(reverts).toHaveLength(1);
    expect(reverts[0]!.blockNumber).toBe(base.number);
    expect(reverts[0]!.payload.orphanedBlockHashes).toEqual(orphaned);
  }, 120_000);

  it('halts on a reorg deeper than its window, saying what to do; the documented recovery leaves the tables of a clean run', async () => {
    const db = await database('deep');
    const liveTopic = newTopic('deep');
    const env = cliEnv(
      db,
      { topic: liveTopic, views: 'vault_yield_api' },
      {
        RPC_URL: anvil.rpcUrl,
        FACTORY_ADDRESS: stack.factory,
        START_BLOCK: String(stack.deploymentBlock),
        MARK_INTERVAL_BLOCKS: String(MARK_INTERVAL),
        SCREEN_TOPIC: uniqueTopic('screen-none'),
        CATALOGUE_TOPIC: uniqueTopic('catalogue-none'),
      },
    );
    const sw = await runCli(['rebuild', 'switch', '--schema', db.schema], env);
    expect(sw.code, sw.stderr).toBe(0);
    const live = indexer(db, liveTopic, { reorgWindow: 2 });
    await live.start();
    for (let k = 0; k < 4; k++) await accrue(BigInt(500 + k));
    await caughtUp(live);
    const published = (await readTopic(kafkaBrokers(), liveTopic)).length;
    await dev.reorg(4, [replacement(7004n)]);
    const err = await live.done.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ReorgTooDeepError);
    const message = (err as Error).message;
    expect(message).toMatch(/reorg deeper than the kept window/);
    expect(message).toMatch(/REORG_WINDOW=2/);
    expect(message).toMatch(/vault-yield reindex --topic <new topic>/);
    await live.stop();
    // It halts again at every start, publishing nothing.
    const again = indexer(db, liveTopic, { reorgWindow: 2 });
    await again.start();
    await expect(again.done).rejects.toBeInstanceOf(ReorgTooDeepError);
    await again.stop();
    expect((await readTopic(kafkaBrokers(), liveTopic)).length).toBe(published);

    // The recovery the message and the README give: a new log cut from the chain as it is now.
    const recovered = newTopic('deep-v2');
    const res = await runCli(
      ['reindex', '--topic', recovered, '--schema', 'vault_yield_rx', '--group', 'rx'],
      env,
      170_000,
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`KAFKA_TOPIC=${recovered}`));

    // A clean run over the same chain: same tables.
    const cleanDb = await database('deep_clean');
    const cleanTopic = newTopic('deep-clean');
    const clean = indexer(cleanDb, cleanTopic);
    const p = projector({
      brokers: kafkaBrokers(),
      url: cleanDb.writerUrl,
      schema: cleanDb.schema,
      topic: cleanTopic,
      group: 'clean',
    });
    try {
      await clean.start();
      await p.start();
      await caughtUp(clean);
      await p.caughtUp({ timeoutMs: 120_000 });
      const want = await checksums(cleanDb.writerUrl, cleanDb.schema, VAULT_TABLES);
      expect(want.ledger!.rows).toBeGreaterThan(30);
      expect(await checksums(db.writerUrl, 'vault_yield_rx', VAULT_TABLES)).toEqual(want);
    } finally {
      await p.stop();
      await clean.stop();
    }
  }, 300_000);
});
