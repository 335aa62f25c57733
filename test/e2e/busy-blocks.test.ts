import {
  type AnvilInstance,
  type BulkResult,
  deployReferenceStack,
  playBulk,
  startAnvil,
} from '@vault-yield/devstack/chain';
import { createPgPool, type Pool } from '@vault-yield/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChainPipeline, startChainPipeline } from '../chain-truth/pipeline.js';

/**
 * Vaults created, funded and worked in crowded blocks on a real chain (the scenario driver's bulk
 * mode mines hundreds of transactions a block): every record of a vault in one block is valued at
 * the block's end, so returns and equity must be taken per block. Chained per record, a vault
 * funded by two deposits in one block fell to the first deposit's share of the two.
 */
describe('end to end: several records of a vault in one block', () => {
  let anvil: AnvilInstance;
  let bulk: BulkResult;
  let p: ChainPipeline;
  let pool: Pool;

  beforeAll(async () => {
    anvil = await startAnvil();
    const stack = await deployReferenceStack(anvil.rpcUrl);
    bulk = await playBulk(stack, { vaults: 8, eventsPerVault: 10, txsPerBlock: 400 });
    // chain → indexer → Kafka → projector → Postgres, caught up with the chain's head
    p = await startChainPipeline(anvil, stack, 'e2e_busy');
    await p.settle();
    pool = createPgPool({ url: p.db.writerUrl, schema: p.db.schema, applicationName: 'e2e-busy', max: 2 });
  }, 240_000);

  afterAll(async () => {
    await pool?.end();
    await p?.stop();
    await anvil?.stop();
  });

  it('the chain put several records of each vault in one block (the case under test)', async () => {
    const { rows } = await pool.query<{ vault: string; n: number }>(
      `select encode(vault, 'hex') as vault, max(n)::int as n
         from (select vault, block_number, count(*) as n from ledger group by vault, block_number) b
        group by vault`,
    );
    expect(rows).toHaveLength(bulk.vaults.length);
    for (const r of rows) expect(r.n, r.vault).toBeGreaterThanOrEqual(2); // the two deposits at least
  });

  it('one equity point per vault and block, and flows sharing a block are no return', async () => {
    const { rows: dup } = await pool.query(
      'select vault, block_number from equity_points group by vault, block_number having count(*) > 1',
    );
    expect(dup).toEqual([]);
    const { rows } = await pool.query<{ vault: string; x: number[] }>(
      `select encode(vault, 'hex') as vault, array_agg(return_index::float8 order by seq) as x
         from equity_points group by vault`,
    );
    expect(rows).toHaveLength(bulk.vaults.length);
    for (const r of rows) {
      expect(r.x.length).toBeGreaterThan(2);
      // No price moves in bulk mode: only rewards and fees move value, a little. Chained per
      // record, the block of the two deposits fell to the first deposit's share of the two.
      for (const x of r.x) {
        expect(x, r.vault).toBeGreaterThan(0.99);
        expect(x, r.vault).toBeLessThan(1.05);
      }
    }
  });

  it('each equity point holds its block end: value and all of the block’s flows (net of flows is flat)', async () => {
    // With no price moves, value − capital in + capital out moves only by what the vault earned
    // (rewards, fees): never by a flow that shares the block with the point.
    const { rows } = await pool.query<{ vault: string; net: number[]; inflow: number[] }>(
      `select encode(vault, 'hex') as vault,
              array_agg((value_usd - capital_in_usd + capital_out_usd)::float8 order by seq) as net,
              array_agg(capital_in_usd::float8 order by seq) as inflow
         from equity_points group by vault`,
    );
    for (const r of rows) {
      const deposited = r.inflow.at(-1)!;
      for (let i = 1; i < r.net.length; i++)
        expect(Math.abs(r.net[i]! - r.net[i - 1]!), r.vault).toBeLessThan(0.05 * deposited);
    }
  });
});
