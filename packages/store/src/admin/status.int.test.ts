import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, type Pool } from '../pool/index.js';
import { heldVaultRows, listDeadLetters, stalePriceRows } from './status.js';

/** `vault-yield status` rows with a vault's address on two chains: two vaults, each its own letters. */
describe('status rows: a vault is (chain, address)', () => {
  let db: TestDatabase;
  let pool: Pool;
  const V = `0x${'ab'.repeat(20)}`;

  beforeAll(async () => {
    db = await createTestDatabase('status_chains');
    pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'status-test', max: 2 });
    const stale = JSON.stringify({
      stalePrices: [{ token: V, symbol: 'WETH', feed: V, ageSeconds: 7200, heartbeatSeconds: 3600 }],
    });
    await pool.query(
      `insert into vault_snapshot (vault, chain_id, owner, strategy, status, snapshot, state, last_record_id,
                                   records_applied, created_at, updated_at, last_seq, held)
       values ($1, 1, $1, 's', 'idle', $2, '{}', 'r', 1, 10, 20, 1, true),
              ($1, 2, $1, 's', 'idle', '{"stalePrices":[]}', '{}', 'r', 1, 10, 30, 1, true)`,
      [V, stale],
    );
    // Held records: one of chain 1, three of chain 2; an undecodable letter of no chain.
    await pool.query(
      `insert into dead_letters (topic, partition, "offset", key, value, reason, vault, kind, seq, chain_id)
       select 't', 0, n, null::bytea, null::bytea, 'gap', $1, 'gap', n, case when n = 1 then 1 else 2 end
       from generate_series(1, 4) n
       union all select 't', 0, 5, null, null, 'bad', $1, 'decode', null, null`,
      [V],
    );
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it("counts each vault's own held records, and names every row's chain", async () => {
    const held = await heldVaultRows(pool, db.schema);
    expect(held.map((h) => [h.chainId, h.vault, h.held])).toEqual([
      [2, V, 3],
      [1, V, 1],
    ]);
    expect((await stalePriceRows(pool, db.schema)).map((r) => [r.chainId, r.vault, r.symbol])).toEqual([
      [1, V, 'WETH'],
    ]);
    expect((await listDeadLetters(pool, db.schema)).map((l) => [l.offset, l.chainId, l.kind])).toEqual([
      ['1', 1, 'gap'],
      ['2', 2, 'gap'],
      ['3', 2, 'gap'],
      ['4', 2, 'gap'],
      ['5', null, 'decode'],
    ]);
  });
});
