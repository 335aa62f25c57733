import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexerCheckpoints } from '../admin/status.js';
import { migrate } from '../migrations/index.js';
import { createPgPool, type Pool } from '../pool/index.js';
import { createIndexerStore, type StoredIndexerVault } from './index.js';

const vault = (v: string, createdBlock: number): StoredIndexerVault => ({
  vault: v,
  createdBlock,
  token0: '0xt0',
  token1: '0xt1',
  pool: '0xp',
  rewardToken: '0xr',
  state: { n: createdBlock },
});

/** The checkpoint's topic (migration 0008) on a real Postgres: saved, read, adopted, guarded. */
describe('indexer store: the topic of the checkpoint', () => {
  let db: TestDatabase;
  let pool: Pool;
  let admin: Pool;

  beforeAll(async () => {
    db = await createTestDatabase('store_indexer');
    admin = createPgPool({ url: db.writerUrl, applicationName: 'store-indexer-test', max: 2 });
    pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'store-indexer', max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await admin?.end();
    await db?.drop();
  });

  it('saves the topic with every checkpoint (commit and rewind) and loads it back', async () => {
    const store = createIndexerStore(pool);
    expect(await store.checkpoint(1)).toBeNull();
    expect((await store.load(1)).checkpoint).toBeNull();
    await store.commit(1, { checkpoint: { blockNumber: 10, blockHash: '0xa' }, topic: 'A', vaults: [] });
    expect(await store.checkpoint(1)).toEqual({ blockNumber: 10, blockHash: '0xa', topic: 'A' });
    expect((await store.load(1)).checkpoint).toEqual({ blockNumber: 10, blockHash: '0xa', topic: 'A' });
    await store.rewind(1, {
      ancestor: { blockNumber: 8, blockHash: '0x8' },
      topic: 'A',
      vaultsCreatedAbove: 8,
      vaults: [],
    });
    expect(await store.checkpoint(1)).toEqual({ blockNumber: 8, blockHash: '0x8', topic: 'A' });
    const [row] = await indexerCheckpoints(admin, db.schema);
    expect(row).toMatchObject({ chainId: 1, blockNumber: 8, topic: 'A' });
    // Per chain: another chain's checkpoint has its own topic.
    await store.commit(2, { checkpoint: { blockNumber: 3, blockHash: '0x3' }, topic: 'B', vaults: [] });
    expect((await indexerCheckpoints(admin, db.schema)).map((c) => [c.chainId, c.topic])).toEqual([
      [1, 'A'],
      [2, 'B'],
    ]);
  });

  it('never overwrites a checkpoint of another topic: the whole commit or rewind fails', async () => {
    const store = createIndexerStore(pool);
    await expect(
      store.commit(1, {
        checkpoint: { blockNumber: 20, blockHash: '0x20' },
        topic: 'B',
        vaults: [vault('0xv1', 15)],
      }),
    ).rejects.toThrow('the checkpoint of chain 1 is of topic A, not B: not overwritten');
    await expect(
      store.rewind(1, {
        ancestor: { blockNumber: 5, blockHash: '0x5' },
        topic: 'B',
        vaultsCreatedAbove: 5,
        vaults: [vault('0xv2', 4)],
      }),
    ).rejects.toThrow('is of topic A, not B');
    const snap = await store.load(1);
    expect(snap.checkpoint).toEqual({ blockNumber: 8, blockHash: '0x8', topic: 'A' });
    expect(snap.vaults).toEqual([]);
  });

  it('adopts a checkpoint without a topic (written before 0008): the next one writes it', async () => {
    const store = createIndexerStore(pool);
    await pool.query('update indexer_checkpoint set topic = null where chain_id = 1');
    expect(await store.checkpoint(1)).toEqual({ blockNumber: 8, blockHash: '0x8', topic: null });
    expect((await indexerCheckpoints(admin, db.schema))[0]?.topic).toBeNull();
    await store.commit(1, { checkpoint: { blockNumber: 9, blockHash: '0x9' }, topic: 'C', vaults: [] });
    expect(await store.checkpoint(1)).toEqual({ blockNumber: 9, blockHash: '0x9', topic: 'C' });
  });

  it('keeps write-ahead rows as given: blocks with and without vaults (alone too), seqs, vault states', async () => {
    const store = createIndexerStore(pool);
    const h = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
    const a = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
    // A block without vaults, saved alone: its row must hold an empty list, not be lost or null.
    await store.saveBlocks(7, [
      { blockNumber: 1, blockHash: h(1), parentHash: h(0), blockTimestamp: 100, vaults: [] },
    ]);
    const blocks = [
      { blockNumber: 2, blockHash: h(2), parentHash: h(1), blockTimestamp: 112, vaults: [a(1), a(2)] },
      { blockNumber: 3, blockHash: h(3), parentHash: h(2), blockTimestamp: 124, vaults: [] },
      {
        blockNumber: 4,
        blockHash: h(4),
        parentHash: h(3),
        blockTimestamp: 1_700_000_000_000,
        vaults: [a(3)],
      },
    ];
    // States of any JSON: quotes, backslashes, non-ASCII, nesting, a null inside.
    const born = [
      { ...vault(a(1), 2), state: { s: 'a "quoted" \\ back\nslash ✓', n: [1, { x: null }] } },
      { ...vault(a(2), 2), state: {} },
    ];
    const seqs = [
      { vault: a(1), blockNumber: 2, blockHash: h(2), firstSeq: 1, lastSeq: 3 },
      { vault: a(2), blockNumber: 2, blockHash: h(2), firstSeq: 1, lastSeq: 1 },
      {
        vault: a(3),
        blockNumber: 4,
        blockHash: h(4),
        firstSeq: 9_007_199_254_740_991,
        lastSeq: 9_007_199_254_740_991,
      },
    ];
    await store.saveBlocks(7, blocks, born, seqs);
    // Saved again (a restart re-saves its write-ahead): the rows are replaced, not doubled.
    await store.saveBlocks(7, blocks, born, seqs);
    const loaded = await store.load(7);
    expect([...loaded.blocks].sort((x, y) => x.blockNumber - y.blockNumber)).toEqual([
      { blockNumber: 1, blockHash: h(1), parentHash: h(0), blockTimestamp: 100, vaults: [] },
      ...blocks,
    ]);
    expect(loaded.vaults).toEqual(born);
    expect(await store.seqsAbove(7, 0)).toEqual(seqs);
    // An empty write-ahead writes nothing and does not fail.
    await store.saveBlocks(7, [], [], []);
    await store.commit(7, { checkpoint: { blockNumber: 4, blockHash: h(4) }, topic: 'T', vaults: [] });
    expect((await store.load(7)).vaults).toEqual(born);
    // A vault without a state is refused, and its batch writes nothing (the states go as one JSON
    // array: a missing one would be JSON null, past the column's `not null`).
    const stateless = { ...vault(a(5), 5), state: undefined };
    const block5 = { blockNumber: 5, blockHash: h(5), parentHash: h(4), blockTimestamp: 125, vaults: [a(5)] };
    await expect(store.saveBlocks(7, [block5], [born[0]!, stateless], [])).rejects.toThrow(
      `indexer vault ${a(5)}: no state to save`,
    );
    const after = await store.load(7);
    expect(after.vaults).toEqual(born);
    expect(after.blocks.map((b) => b.blockNumber)).not.toContain(5);
  });

  it('on a schema not migrated to 0008: status reads no topic, the indexer is told to migrate', async () => {
    await migrate(admin, 'pre_0008');
    await admin.query('alter table pre_0008.indexer_checkpoint drop column topic');
    await admin.query(
      `insert into pre_0008.indexer_checkpoint (chain_id, block_number, block_hash) values (1, 7, '0x7')`,
    );
    expect(await indexerCheckpoints(admin, 'pre_0008')).toEqual([
      expect.objectContaining({ chainId: 1, blockNumber: 7, topic: null }),
    ]);
    const old = createPgPool({ url: db.writerUrl, schema: 'pre_0008', applicationName: 'pre-0008', max: 1 });
    try {
      await expect(createIndexerStore(old).load(1)).rejects.toThrow(
        'indexer_checkpoint has no topic column: the schema predates migration 0008; migrate it (vault-yield migrate) first',
      );
    } finally {
      await old.end();
    }
  });
});
