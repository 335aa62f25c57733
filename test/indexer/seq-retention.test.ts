import { testTokenAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  deployReferenceStack,
  giftPosition,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
  write,
} from '@vault-yield/devstack/chain';
import { decodeRecord, type VaultRecord } from '@vault-yield/domain';
import { createIndexer, type Indexer, republishVault } from '@vault-yield/indexer';
import { createIndexerStore, createPgPool, type Pool } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { readMessages, silent } from '@vault-yield/test-kit/indexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopics } from '../projector/support.js';

const HEARTBEATS = { default: 3600, byFeed: {} };
const REORG_WINDOW = 3;

/**
 * The indexer's sequence rows stay bounded (#27 item 8): below the reorg window it compacts them
 * into spans as it advances, and `vault-yield republish` re-derives a vault's records of a
 * compacted range — whole or a slice of a span — byte for byte, numbers included. Spans are kept
 * short here (few blocks, few marks) so each vault has several.
 */
describe('sequence rows compacted below the reorg window (anvil, Kafka, Postgres)', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let db: TestDatabase;
  let pool: Pool;
  let indexer: Indexer;
  let checkpoint = 0;
  const topic = uniqueTopic('seq-retention');
  const brokers = () => kafkaBrokers();
  /** The live log's records by vault, in log order (bytes and decoded). */
  const byVault = new Map<string, { value: Buffer; record: VaultRecord }[]>();

  const readByVault = async (t: string) => {
    const out = new Map<string, { value: Buffer; record: VaultRecord }[]>();
    for (const m of await readMessages(brokers(), t)) {
      const d = decodeRecord(m.value);
      if (!d.ok || !m.value) throw new Error(`undecodable record: ${d.ok ? 'empty' : d.reason}`);
      const list = out.get(d.record.vault) ?? [];
      out.set(d.record.vault, list);
      list.push({ value: m.value, record: d.record });
    }
    return out;
  };

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    const demo = await playDemoScenario(stack);
    // Records from a token's Transfer and a pool's Mint (not a vault event) are recounted too.
    for (const dv of demo.vaults) {
      const p = stack.pools.find((x) => x.address.toLowerCase() === dv.pool.toLowerCase())!;
      await write(stack.clients, stack.accounts.deployer, p.token1.address, testTokenAbi, 'mint', [
        dv.address,
        10n ** BigInt(p.token1.decimals),
      ]);
      await giftPosition(stack, { address: dv.address, pool: p }, 1_000, { halfWidth: 600 });
    }
    const head = Number(await stack.clients.publicClient.getBlockNumber());
    db = await createTestDatabase('seq_retention');
    pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'seq-retention', max: 2 });
    indexer = createIndexer({
      rpcUrl: anvil.rpcUrl,
      factory: stack.factory,
      kafka: { brokers: brokers(), topic, partitions: 4 },
      databaseUrl: db.writerUrl,
      schema: db.schema,
      pollIntervalMs: 50,
      maxBlockRange: 7,
      concurrency: 3,
      reorgWindow: REORG_WINDOW,
      mark: { intervalBlocks: 3, minIntervalMs: 0 },
      seqCompaction: { everyBlocks: 1, maxRows: 1_000, maxSpanBlocks: 40, maxSpanMarks: 3 },
      heartbeats: HEARTBEATS,
      logger: silent,
    });
    await indexer.start();
    await indexer.waitFor(head);
    await indexer.stop();
    checkpoint = indexer.status().checkpoint.blockNumber;
    for (const [v, list] of await readByVault(topic)) byVault.set(v, list);
  }, 240_000);

  afterAll(async () => {
    await indexer?.stop();
    await pool?.end();
    await anvil?.stop();
    await db?.drop();
    await deleteTopics();
  });

  const republish = (vault: string, target: string, fromBlock: number, toBlock?: number) =>
    republishVault({
      rpcUrl: anvil.rpcUrl,
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

  it('keeps rows only for the reorg window; below it a few spans per vault, marks listed', async () => {
    const { rows } = await pool.query<{ below: string; window: string; spans: string; marks: string }>(
      `select (select count(*) from indexer_vault_seqs where block_number < $1)::text as below,
              (select count(*) from indexer_vault_seqs)::text as window,
              (select count(*) from indexer_vault_seq_spans)::text as spans,
              (select coalesce(sum(mark_count), 0) from indexer_vault_seq_spans)::text as marks`,
      [checkpoint - REORG_WINDOW + 1],
    );
    // A row per vault and block with records, before.
    const written = new Set(
      [...byVault.values()].flat().map((m) => `${m.record.vault}:${m.record.blockNumber}`),
    );
    expect(Number(rows[0]!.below)).toBe(0);
    expect(Number(rows[0]!.spans)).toBeGreaterThan(byVault.size);
    expect(Number(rows[0]!.spans) + Number(rows[0]!.window)).toBeLessThan(written.size / 2);
    // Marks were made (intervalBlocks 3), and every one below the window is listed.
    const marksBelow = [...byVault.values()]
      .flat()
      .filter((m) => m.record.type === 'mark' && m.record.blockNumber < checkpoint - REORG_WINDOW + 1).length;
    expect(marksBelow).toBeGreaterThan(0);
    expect(Number(rows[0]!.marks)).toBe(marksBelow);
  });

  it('republish re-derives every vault from its spans and rows, byte for byte, numbers included', async () => {
    const copy = uniqueTopic('seq-retention-copy');
    await createTopic(brokers(), copy, 4);
    const store = createIndexerStore(pool);
    for (const [vault, live] of byVault) {
      expect((await store.vaultSeqSpans(anvil.chainId, vault, 0, checkpoint)).length).toBeGreaterThan(1);
      const result = await republish(vault, copy, 0);
      expect(result).toMatchObject({
        records: live.length,
        firstSeq: 1,
        lastSeq: live.length,
        notRederived: [],
      });
    }
    const again = await readByVault(copy);
    for (const [vault, live] of byVault)
      expect(again.get(vault)?.map((m) => m.value.toString('hex'))).toEqual(
        live.map((m) => m.value.toString('hex')),
      );
  });

  it('a range inside spans gives exactly its blocks’ records (numbered from the span’s first)', async () => {
    const [vault, live] = [...byVault.entries()].sort((a, b) => b[1].length - a[1].length)[0]!;
    const store = createIndexerStore(pool);
    const spans = await store.vaultSeqSpans(anvil.chainId, vault, 0, checkpoint);
    // From inside the second span to inside the third (or the last).
    const inner = spans[Math.min(2, spans.length - 1)]!;
    const fromBlock = spans[1]!.fromBlock + 1;
    const toBlock = inner.toBlock - 1;
    const slice = live.filter((m) => m.record.blockNumber >= fromBlock && m.record.blockNumber <= toBlock);
    expect(slice.length).toBeGreaterThan(0);
    const copy = uniqueTopic('seq-retention-slice');
    await createTopic(brokers(), copy, 4);
    const result = await republish(vault, copy, fromBlock, toBlock);
    expect(result).toMatchObject({ records: slice.length, firstSeq: slice[0]!.record.seq });
    const again = (await readByVault(copy)).get(vault) ?? [];
    expect(again.map((m) => m.value.toString('hex'))).toEqual(slice.map((m) => m.value.toString('hex')));
  });
});
