import {
  type AnvilInstance,
  type DemoResult,
  deployReferenceStack,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
} from '@vault-yield/devstack/chain';
import { createIndexer, type Indexer } from '@vault-yield/indexer';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import {
  byVault,
  contextReader,
  expectedRecords,
  normalized,
  readMessages,
  readTopic,
  recordId,
  silent,
} from '@vault-yield/test-kit/indexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('indexer backfill of the demo scenario', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let demo: DemoResult;
  let db: TestDatabase;
  let indexer: Indexer;
  const topic = uniqueTopic('indexer-backfill');
  const brokers = () => kafkaBrokers();
  /** One indexer of the demo chain into `t` and `into`'s schema. */
  const indexerOf = (t: string, into: TestDatabase, lens?: 'create') =>
    createIndexer({
      rpcUrl: anvil.rpcUrl,
      factory: stack.factory,
      kafka: { brokers: brokers(), topic: t, partitions: 4 },
      databaseUrl: into.writerUrl,
      schema: into.schema,
      pollIntervalMs: 50,
      // Small ranges: the backfill crosses many chunks and the adaptive sizing.
      maxBlockRange: 7,
      concurrency: 3,
      mark: { intervalBlocks: 3, minIntervalMs: 0 },
      valuationLens: lens,
      logger: silent,
    });

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    demo = await playDemoScenario(stack);
    db = await createTestDatabase('indexer_backfill');
    indexer = indexerOf(topic, db);
    await indexer.start();
    await indexer.waitFor(Number(demo.toBlock));
  });

  afterAll(async () => {
    await indexer?.stop();
    await anvil?.stop();
    await db?.drop();
  });

  it('publishes exactly the chain’s vault records, with contexts equal to eth_call at their block', async () => {
    const topicRecords = (await readTopic(brokers(), topic)).map((t) => t.record);
    const published = topicRecords.filter((r) => r.type !== 'mark');
    const expected = await expectedRecords(
      anvil.rpcUrl,
      anvil.chainId,
      stack.factory,
      Number(stack.deploymentBlock),
      Number(demo.toBlock),
    );
    expect(expected.length).toBeGreaterThan(30);
    expect(published.map(normalized).sort()).toEqual(expected.map(normalized).sort());
    expect(new Set(published.map(recordId)).size).toBe(published.length);
  });

  it('keeps each vault’s records in block order on one partition', async () => {
    const all = await readTopic(brokers(), topic);
    const partitions = new Map<string, Set<number>>();
    for (const t of all) {
      const s = partitions.get(t.record.vault) ?? new Set();
      s.add(t.partition);
      partitions.set(t.record.vault, s);
    }
    for (const s of partitions.values()) expect(s.size).toBe(1);
    for (const [vault, list] of byVault(all.map((t) => t.record))) {
      for (let i = 1; i < list.length; i++) {
        const a = list[i - 1]!;
        const b = list[i]!;
        const ordered =
          a.blockNumber < b.blockNumber ||
          (a.blockNumber === b.blockNumber &&
            (a.txIndex < b.txIndex || (a.txIndex === b.txIndex && a.logIndex < b.logIndex)));
        expect(ordered, `${vault}: ${recordId(a)} before ${recordId(b)}`).toBe(true);
      }
      // Numbered 1, 2, 3, … in the log (marks included): no gap, no repeat.
      expect(list.map((r) => r.seq)).toEqual(list.map((_r, i) => i + 1));
    }
  });

  it('marks vaults whose prices moved, valued like eth_call at the mark’s block, at the configured cadence', async () => {
    const all = (await readTopic(brokers(), topic)).map((t) => t.record);
    const marks = all.filter((r) => r.type === 'mark');
    expect(marks.length).toBeGreaterThan(0);
    const read = contextReader(anvil.rpcUrl, stack.factory);
    for (const m of marks) expect(normalized(m.context)).toBe(normalized(await read(m.vault, m.blockNumber)));
    // A mark never shares a block with the vault's own records (those carry the context already).
    const activity = new Set(all.filter((r) => r.type !== 'mark').map((r) => `${r.vault}@${r.blockNumber}`));
    for (const m of marks) expect(activity.has(`${m.vault}@${m.blockNumber}`)).toBe(false);
    // Every price move block marks the vaults on a moved pool with no activity there (cadence 3 blocks; moves are far apart).
    const vaultsAt = (b: bigint) =>
      all.filter((r) => r.blockNumber === Number(b) && r.type === 'mark').map((r) => r.vault);
    for (const move of demo.priceMoves) {
      // A move swaps only the pools holding the moved token: the vaults on them are the ones marked.
      const moved = new Set(
        stack.pools
          .filter((p) => p.token0.symbol === move.token || p.token1.symbol === move.token)
          .map((p) => p.address),
      );
      const onMoved = new Set(demo.vaults.filter((v) => moved.has(v.pool)).map((v) => v.address));
      const created = new Set(
        all
          .filter(
            (r) => r.type === 'vault.created' && r.blockNumber < move.blockNumber && onMoved.has(r.vault),
          )
          .map((r) => r.vault),
      );
      const marked = new Set(vaultsAt(move.blockNumber));
      for (const v of created) {
        if (!activity.has(`${v}@${move.blockNumber}`))
          expect(marked.has(v), `${v} marked at ${move.blockNumber}`).toBe(true);
      }
    }
  });

  it('checkpoints the last block with its hash', async () => {
    const s = indexer.status();
    expect(s.checkpoint.blockNumber).toBeGreaterThanOrEqual(Number(demo.toBlock));
    expect(s.vaults).toBe(demo.vaults.length);
  });

  it('values from a state override on anvil, and an indexer forced to creation code publishes the same bytes', async () => {
    expect(indexer.status().valuationLens).toBe('override');
    const other = uniqueTopic('indexer-backfill-create');
    const otherDb = await createTestDatabase('indexer_backfill_create');
    const create = indexerOf(other, otherDb, 'create');
    try {
      await create.start();
      await create.waitFor(Number(demo.toBlock));
      expect(create.status().valuationLens).toBe('create');
      // Creation code answers ≤ 24 KiB: never fewer calls than the override's one per block.
      expect(create.status().valuationCalls).toBeGreaterThanOrEqual(indexer.status().valuationCalls);
    } finally {
      await create.stop();
      await otherDb.drop();
    }
    const bytes = async (t: string) =>
      (await readMessages(brokers(), t)).map(
        (m) => `${m.partition}/${m.key}/${m.value?.toString('hex') ?? 'null'}`,
      );
    const a = await bytes(topic);
    expect(a.length).toBeGreaterThan(30);
    expect(await bytes(other)).toEqual(a);
  });
});
