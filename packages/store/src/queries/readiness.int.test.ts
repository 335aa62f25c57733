import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, type Pool } from '../pool/index.js';
import { indexerHeads, projectionFreshness } from './readiness.js';

/**
 * Freshness over several chains (#45): a chain's indexer checkpoint is compared with the newest
 * block folded of that chain's vaults only — block numbers (and times) of two chains are never
 * compared — and the chain furthest behind is the one reported.
 */
let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('readiness_chains');
  pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'readiness-test', max: 2 });
  // Chain 1 is far along (block 1000) and folded to its head; chain 2 is young (block 60) and
  // folded to block 50: 10 blocks and 120 s behind.
  for (const [chain, head, at] of [
    [1, 1000, 5_000],
    [2, 60, 9_000],
  ] as const) {
    await pool.query(
      `insert into indexer_checkpoint (chain_id, block_number, block_hash) values ($1, $2, $3)`,
      [chain, head, `h${head}`],
    );
    await pool.query(
      `insert into indexer_blocks (chain_id, block_number, block_hash, parent_hash, block_timestamp)
       values ($1, $2, $3, 'p', $4)`,
      [chain, head, `h${head}`, at],
    );
  }
  const snapshot = async (chain: number, block: number, ms: number) =>
    pool.query(
      `insert into vault_snapshot (vault, chain_id, owner, strategy, status, snapshot, state, last_record_id, records_applied, created_at, updated_at)
       values ('0xv', $1, 'o', 's', 'idle', json_build_object('blockNumber', $2::int), '{}', 'r', 1, 0, $3)`,
      [chain, block, ms],
    );
  await snapshot(1, 1000, 5_000_000);
  await snapshot(2, 50, 8_880_000);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe('projection freshness over several chains', () => {
  it('reads each chain’s checkpoint', async () => {
    expect(await indexerHeads(pool, db.schema)).toEqual([
      { chainId: 1, blockNumber: 1000, blockTime: 5_000_000 },
      { chainId: 2, blockNumber: 60, blockTime: 9_000_000 },
    ]);
  });

  it('reports the chain furthest behind, each against its own vaults', async () => {
    const f = await projectionFreshness(pool, db.schema, {
      topic: 't',
      high: null,
      indexerSchema: db.schema,
    });
    // Compared across chains, chain 1's head and fold would hide chain 2's lag (1000 − 1000 = 0).
    expect(f).toMatchObject({
      chainId: 2,
      blocks: 10,
      seconds: 120,
      folded: { blockNumber: 50, blockTime: 8_880_000 },
      head: { chainId: 2, blockNumber: 60 },
    });
  });

  it('a chain whose lag in time is unknown (nothing folded yet) never hides one whose lag is known', async () => {
    await pool.query(
      `insert into indexer_checkpoint (chain_id, block_number, block_hash) values (3, 7, 'h7')`,
    );
    const f = await projectionFreshness(pool, db.schema, {
      topic: 't',
      high: null,
      indexerSchema: db.schema,
    });
    expect(f).toMatchObject({ chainId: 2, blocks: 10, seconds: 120 });
    // With no records left to fold, every chain is as fresh as the log.
    const none = await projectionFreshness(pool, db.schema, {
      topic: 't',
      high: new Map(),
      indexerSchema: db.schema,
    });
    expect(none).toMatchObject({ records: 0, blocks: 0, seconds: 0 });
  });
});
