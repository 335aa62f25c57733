import { createLogger } from '@vault-yield/common';
import {
  getLiquidityForAmount0,
  getSqrtRatioAtTick,
  type VaultRecord,
  type VaultRecordOf,
  vaultId,
} from '@vault-yield/domain';
import { createLogAdmin, createPublisher } from '@vault-yield/log';
import { bytesToHex, createPgPool, type Pool } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { eth, History, POOL, TICK_2000, VAULT, WETH } from '@vault-yield/test-kit/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjector, type Projector } from './projector.js';

/**
 * Many chains (#45, DESIGN §8): a vault is (chain, address). The same address on two chains —
 * what one deployer's factory gives on every chain — with different histories folds into two
 * vaults everywhere the projector writes or caches: snapshots, equity points, positions, ledger
 * rows, record bundles, held records, stream commits; a gap on one chain holds that chain's vault
 * only, and a revert on one chain removes and re-folds that chain's vault only. Records are keyed
 * by the bare address in the log (partitioning), so both chains' records share a partition, its
 * batches and the projector's state cache: identity comes from each record's chainId.
 */

const CHAIN_A = 31337;
const CHAIN_B = 31338;
const A = vaultId(CHAIN_A, VAULT);
const B = vaultId(CHAIN_B, VAULT);

const silent = createLogger({ name: 'chains-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** A record of `h` as chain `chainId`'s (History builds chain 31337's). */
const on = <R extends VaultRecord>(chainId: number, r: R): R => ({ ...r, chainId });

function openPosition(h: History, id: string, amount0: bigint): VaultRecordOf<'position.opened'> {
  const [lower, upper] = [TICK_2000 - 600, TICK_2000 + 600];
  const l = getLiquidityForAmount0(getSqrtRatioAtTick(lower), getSqrtRatioAtTick(upper), amount0);
  return h.record('position.opened', {
    positionId: id,
    pool: POOL,
    tickLower: lower,
    tickUpper: upper,
    liquidity: l.toString(),
    amount0: amount0.toString(),
    amount1: '0',
  });
}

// Chain A: created, 5 WETH in, a mark, 1 WETH in (blocks 101…104).
const ha = new History();
const ofA = [ha.created(), ha.deposit(WETH, eth(5)), ha.mark(), ha.deposit(WETH, eth(1))].map((r) =>
  on(CHAIN_A, r),
);
// Chain B, the same address and the same block numbers and hashes: created, 2 WETH in, a
// position of 0.5 WETH (on B only), 1 WETH in; then a reorg of blocks 103 and 104 (B's only).
const hb = new History();
const ofB = [
  hb.created(),
  hb.deposit(WETH, eth(2)),
  openPosition(hb, '7', eth(0.5)),
  hb.deposit(WETH, eth(1)),
].map((r) => on(CHAIN_B, r));
const revertB = on(
  CHAIN_B,
  hb.record('revert', {
    fromBlock: ofB[2]!.blockNumber,
    orphanedBlockHashes: [ofB[2]!.blockHash, ofB[3]!.blockHash],
    fromSeq: ofB[2]!.seq!,
  }),
);

describe('projector: the same vault address on two chains is two vaults (Postgres + Kafka)', () => {
  let db: TestDatabase;
  let pool: Pool;
  let p: Projector;
  const brokers = kafkaBrokers();
  const topic = uniqueTopic('proj-chains');

  const publish = async (records: readonly VaultRecord[]) => {
    const publisher = await createPublisher({ brokers, clientId: 'chains-publisher', topic });
    try {
      await publisher.publish(records);
    } finally {
      await publisher.close();
    }
    await p.caughtUp({ timeoutMs: 60_000 });
  };

  const snapshots = async () =>
    (
      await pool.query<{
        chain_id: number;
        text: string;
        snapshot: Record<string, unknown>;
        last_seq: string | null;
        held: boolean;
        records_applied: string;
      }>(
        `select chain_id, snapshot::text as text, snapshot, last_seq::text, held, records_applied::text
           from vault_snapshot where vault = $1 order by chain_id`,
        [VAULT],
      )
    ).rows;

  /** A chain's rows of the vault tables, as text (to tell them unchanged). */
  const rowsOf = async (chainId: number) => {
    const out: Record<string, string[]> = {};
    const bytea = bytesToHex('vault');
    for (const [table, key, order] of [
      ['vault_snapshot', 'vault', 'vault'],
      ['positions', 'vault', 'position_id'],
      ['equity_points', bytea, 'seq'],
      ['ledger', bytea, 'block_number, tx_index, log_index'],
      ['record_bundles', 'vault', 'id'],
    ] as const) {
      const cols =
        table === 'ledger'
          ? `to_jsonb(t) - 'commit_xid'`
          : table === 'vault_snapshot'
            ? `to_jsonb(t) - 'log_topic' - 'log_partition'`
            : 'to_jsonb(t)';
      const { rows } = await pool.query<{ r: string }>(
        `select (${cols})::text as r from ${table} t where chain_id = $1 and ${key} = $2 order by ${order}`,
        [chainId, VAULT],
      );
      out[table] = rows.map((x) => x.r);
    }
    return out;
  };

  const count = async (table: string, chainId: number) => {
    const key = table === 'ledger' || table === 'equity_points' ? bytesToHex('vault') : 'vault';
    const { rows } = await pool.query<{ n: number }>(
      `select count(*)::int as n from ${table} where chain_id = $1 and ${key} = $2`,
      [chainId, VAULT],
    );
    return rows[0]!.n;
  };

  beforeAll(async () => {
    db = await createTestDatabase('proj_chains');
    pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'chains-test', max: 2 });
    const admin = await createLogAdmin({ brokers, clientId: 'chains-admin' });
    try {
      await admin.ensureTopic({ topic, partitions: 2 });
    } finally {
      await admin.close();
    }
    p = createProjector({
      kafka: { brokers, topic, consumerGroup: 'chains', groupId: `chains.${topic}`, sessionTimeoutMs: 6_000 },
      databaseUrl: db.writerUrl,
      schema: db.schema,
      logger: silent,
    });
    await p.start();
  });
  afterAll(async () => {
    await p?.stop();
    await pool?.end();
    const admin = await createLogAdmin({ brokers, clientId: 'chains-admin' });
    await admin.deleteTopic(topic).catch(() => {});
    await admin.close();
    await db?.drop();
  });

  it('a gap on one chain holds that chain only; the other folds on', async () => {
    // B's deposit (its number 2) is lost on the way: B holds its numbers 3 and 4.
    const lost = ofB[1]!;
    await publish([ofA[0]!, ofB[0]!, ofA[1]!, ofA[2]!, ofB[2]!, ofA[3]!, ofB[3]!]);
    const [a, b] = await snapshots();
    expect([a?.chain_id, b?.chain_id]).toEqual([CHAIN_A, CHAIN_B]);
    expect(a).toMatchObject({ last_seq: '4', held: false, records_applied: '4' });
    expect(a?.snapshot.behind).toBeNull();
    expect(b).toMatchObject({ last_seq: '1', held: true, records_applied: '1' });
    expect(b?.snapshot.behind).toMatchObject({
      kinds: ['gap'],
      deadLetters: 2,
      gap: { missingFrom: lost.seq },
    });
    const { rows: letters } = await pool.query<{ chain_id: number; vault: string; seq: string }>(
      'select chain_id, vault, seq::text from dead_letters order by seq',
    );
    expect(letters).toEqual([
      { chain_id: CHAIN_B, vault: VAULT, seq: '3' },
      { chain_id: CHAIN_B, vault: VAULT, seq: '4' },
    ]);

    // The lost record arrives: B's held records are released, A is as it was.
    const aBefore = await rowsOf(CHAIN_A);
    await publish([lost]);
    const [, released] = await snapshots();
    expect(released).toMatchObject({ last_seq: '4', held: false, records_applied: '4' });
    expect(released?.snapshot.behind).toBeNull();
    expect((await pool.query('select 1 from dead_letters')).rowCount).toBe(0);
    expect(await rowsOf(CHAIN_A)).toEqual(aBefore);
  });

  it("keeps each chain's snapshot, equity points, positions, ledger rows and record bundles apart", async () => {
    const [a, b] = await snapshots();
    // The served text begins with the vault id and chain, as migration 0028 writes older rows.
    expect(a?.text.startsWith(`{"id":"${A}","chainId":${CHAIN_A},"vault":"${VAULT}",`)).toBe(true);
    expect(b?.text.startsWith(`{"id":"${B}","chainId":${CHAIN_B},"vault":"${VAULT}",`)).toBe(true);
    // Each chain's own figures: 6 WETH in on A, 3 WETH in on B (at 2,000 USD), a position on B only.
    expect(a?.snapshot).toMatchObject({ capitalInUsd: 12_000, positions: [] });
    expect(b?.snapshot).toMatchObject({ capitalInUsd: 6_000, positions: [{ id: '7' }] });
    expect([await count('positions', CHAIN_A), await count('positions', CHAIN_B)]).toEqual([0, 1]);
    // Ledger rows (sequenced marks have none): A created + 2 deposits; B created, deposit, position, deposit.
    expect([await count('ledger', CHAIN_A), await count('ledger', CHAIN_B)]).toEqual([3, 4]);
    expect(await count('record_bundles', CHAIN_A)).toBeGreaterThan(0);
    expect(await count('record_bundles', CHAIN_B)).toBeGreaterThan(0);
    const { rows: last } = await pool.query<{ chain_id: number; capital_in_usd: string }>(
      `select distinct on (chain_id) chain_id, capital_in_usd::text from equity_points
        where vault = decode(substr($1, 3), 'hex') order by chain_id, seq desc`,
      [VAULT],
    );
    expect(last).toEqual([
      { chain_id: CHAIN_A, capital_in_usd: '12000' },
      { chain_id: CHAIN_B, capital_in_usd: '6000' },
    ]);
    // Streams and their notices name vault ids.
    const { rows: commits } = await pool.query<{ v: string }>(
      'select distinct unnest(vaults) as v from stream_commits order by v',
    );
    expect(commits.map((c) => c.v)).toEqual([A, B]);
  });

  it('a revert on one chain removes and re-folds only its vault', async () => {
    const aBefore = await rowsOf(CHAIN_A);
    await publish([revertB]);
    // A's rows of the very same blocks and hashes are untouched, and A was not re-folded.
    expect(await rowsOf(CHAIN_A)).toEqual(aBefore);
    const [, b] = await snapshots();
    // B re-folded from what remains: created and its 2 WETH.
    expect(b?.snapshot).toMatchObject({ capitalInUsd: 4_000, positions: [] });
    expect(b?.records_applied).toBe('2');
    expect([await count('positions', CHAIN_B), await count('ledger', CHAIN_B)]).toEqual([0, 2]);
    // The revert's commit names B alone and retracts B's two rows.
    const { rows } = await pool.query<{ vaults: string[]; retracted: string[] | null }>(
      'select vaults, retracted from stream_commits order by seq desc limit 1',
    );
    expect(rows[0]?.vaults).toEqual([B]);
    expect(rows[0]?.retracted).toHaveLength(2);
  });
});
