import { vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  createVault,
  type DevChain,
  deployReferenceStack,
  devChain,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
  type TrackedVault,
  write,
} from '@vault-yield/devstack/chain';
import type { VaultRecord } from '@vault-yield/domain';
import { createIndexer, type Indexer, ReorgTooDeepError } from '@vault-yield/indexer';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { expectedRecords, normalized, readTopic, recordId, silent } from '@vault-yield/test-kit/indexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** accrueRewards(uint256) calldata, for transactions replayed into replacement blocks by anvil_reorg. */
const accrueCalldata = (amount: bigint) => `0xe1a472b9${amount.toString(16).padStart(64, '0')}`;

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

describe('indexer reorg handling', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let dev: DevChain;
  let db: TestDatabase;
  let indexer: Indexer;
  let vault: TrackedVault;
  const topic = uniqueTopic('indexer-reorg');

  const head = async () => {
    const n = Number(await dev.blockNumber());
    const b = await dev.rpc.call<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);
    return { number: n, hash: b.hash };
  };
  const caughtUp = async () => {
    const end = Date.now() + 60_000;
    for (;;) {
      const h = await head();
      const c = indexer.status().checkpoint;
      if (c.blockNumber === h.number && c.blockHash === h.hash) return h;
      if (Date.now() > end)
        throw new Error(`indexer stuck at ${JSON.stringify(c)}, head ${JSON.stringify(h)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const accrue = (amount: bigint) =>
    write(stack.clients, stack.accounts.agent, vault.address, vaultAbi, 'accrueRewards', [amount]);

  beforeAll(async () => {
    anvil = await startAnvil();
    dev = devChain(anvil.rpcUrl);
    stack = await deployReferenceStack(anvil.rpcUrl);
    await playDemoScenario(stack);
    vault = await createVault(stack, stack.accounts.owners[3]!, stack.pools[0]!, 'reorg-test');
    db = await createTestDatabase('indexer_reorg');
    indexer = createIndexer({
      rpcUrl: anvil.rpcUrl,
      factory: stack.factory,
      kafka: { brokers: kafkaBrokers(), topic, partitions: 4 },
      databaseUrl: db.writerUrl,
      schema: db.schema,
      pollIntervalMs: 20,
      confirmations: 0,
      reorgWindow: 16,
      mark: { intervalBlocks: 2 },
      logger: silent,
    });
    await indexer.start();
    await caughtUp();
  }, 120_000);

  afterAll(async () => {
    await indexer?.stop();
    await anvil?.stop();
    await db?.drop();
  });

  for (const depth of [1, 2, 5]) {
    it(`reverts a depth-${depth} reorg whose replaced blocks hold vault txs, then publishes the canonical records`, async () => {
      for (let i = 0; i < depth; i++) await accrue(BigInt(1000 + i));
      const before = await caughtUp();
      const orphaned: string[] = [];
      for (let n = before.number - depth + 1; n <= before.number; n++) {
        const b = await dev.rpc.call<{ hash: string }>('eth_getBlockByNumber', [
          `0x${n.toString(16)}`,
          false,
        ]);
        orphaned.push(b.hash);
      }
      // Replacement blocks: a different vault tx in the first one.
      await dev.reorg(depth, [
        [
          {
            from: stack.accounts.agent,
            to: vault.address,
            data: accrueCalldata(BigInt(7000 + depth)),
            gas: '0x30d40',
          },
          0,
        ],
      ]);
      const after = await caughtUp();
      expect(after.number).toBe(before.number);
      expect(after.hash).not.toBe(before.hash);

      const mine = (await readTopic(kafkaBrokers(), topic))
        .map((t) => t.record)
        .filter((r) => r.vault === vault.address);
      const revertAt = mine.findIndex(
        (r) => r.type === 'revert' && r.payload.orphanedBlockHashes.some((h) => orphaned.includes(h)),
      );
      expect(revertAt).toBeGreaterThan(0);
      const revert = mine[revertAt]!;
      if (revert.type !== 'revert') throw new Error('unreachable');
      expect(revert.payload.fromBlock).toBe(before.number - depth + 1);
      expect(revert.payload.orphanedBlockHashes).toEqual(orphaned);
      // Before the revert: the orphaned records; after it: the canonical replacement record.
      const orphanedRecords = mine.slice(0, revertAt).filter((r) => orphaned.includes(r.blockHash));
      expect(orphanedRecords.filter((r) => r.type === 'rewards.accrued')).toHaveLength(depth);
      const canonical = mine
        .slice(revertAt + 1)
        .filter((r) => r.type === 'rewards.accrued' && r.blockNumber === before.number - depth + 1);
      expect(canonical.map((r) => (r.payload as { amount: string }).amount)).toEqual([String(7000 + depth)]);
      // Numbers: the revert takes the next one above the orphaned records' and names the first
      // it voids; the canonical records continue after it. Never a gap, never a repeat.
      const firstVoided = mine.find((r) => orphaned.includes(r.blockHash))!;
      expect(revert.payload.fromSeq).toBe(firstVoided.seq);
      expect(revert.seq).toBe(mine[revertAt - 1]!.seq! + 1);
      expect(mine.map((r) => r.seq)).toEqual(mine.map((_r, i) => i + 1));
    });
  }

  it('leaves a stream that, with reverts applied, equals the canonical chain', async () => {
    const records = (await readTopic(kafkaBrokers(), topic)).map((t) => t.record);
    const h = await head();
    const kept = effective(records).filter((r) => r.type !== 'mark');
    const expected = await expectedRecords(
      anvil.rpcUrl,
      anvil.chainId,
      stack.factory,
      Number(stack.deploymentBlock),
      h.number,
    );
    const dedup = new Map(kept.map((r) => [recordId(r), normalized(r)]));
    expect([...dedup.values()].sort()).toEqual(expected.map(normalized).sort());
  });

  it('stops with a clear error on a reorg deeper than the kept window', async () => {
    const db2 = await createTestDatabase('indexer_reorg_deep');
    const shallow = createIndexer({
      rpcUrl: anvil.rpcUrl,
      factory: stack.factory,
      kafka: { brokers: kafkaBrokers(), topic: uniqueTopic('indexer-reorg-deep'), partitions: 2 },
      databaseUrl: db2.writerUrl,
      schema: db2.schema,
      pollIntervalMs: 20,
      reorgWindow: 2,
      logger: silent,
    });
    try {
      await shallow.start();
      for (let i = 0; i < 4; i++) await accrue(BigInt(50 + i));
      const h = await head();
      await shallow.waitFor(h.number);
      await dev.reorg(4, [
        [{ from: stack.accounts.agent, to: vault.address, data: accrueCalldata(99n), gas: '0x30d40' }, 0],
      ]);
      await expect(shallow.done).rejects.toBeInstanceOf(ReorgTooDeepError);
      await expect(shallow.done).rejects.toThrow(/deeper than the kept window/);
      // Its checkpoint did not move past the block it could not repair.
      expect(shallow.status().checkpoint.blockNumber).toBe(h.number);
      // The indexer with the larger window handles the same reorg.
      await caughtUp();
    } finally {
      await shallow.stop();
      await db2.drop();
    }
  });
});
