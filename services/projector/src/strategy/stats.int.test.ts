import {
  createPgPool,
  createProjectionStore,
  hexToBytes,
  type Pool,
  type SnapshotRow,
} from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshStrategyStats } from './stats.js';

/**
 * Each vault's daily returns count up to how far THAT vault was folded (issue #43 item 2): the
 * extent of its partition, written with the partition's offset in the batch's transaction (store
 * projection tx, migration 0024), or its own last record while it is held at a gap — never the
 * projection's latest record, which read a lagging vault's unfolded days as quiet days.
 */
describe('strategy stats: each vault up to its own fold extent (Postgres)', () => {
  const DAY = 86_400_000;
  const T0 = Date.UTC(2026, 0, 1);
  let db: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase('fold_extents');
    pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'fold-extents', max: 2 });
    await pool.query(`insert into strategies (id, name, updated_at) values ('even', 'Even', 0)`);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  /** A vault of 1,000 earning `daily` (+0.1 %) a day: equity points at 01:00 of days 0…`days`. */
  async function earning(
    vault: string,
    days: number,
    strategy = 'even',
    { chainId = 31337, daily = 1.001 }: { chainId?: number; daily?: number } = {},
  ): Promise<SnapshotRow> {
    const points = Array.from({ length: days + 1 }, (_, d) => ({
      ts: T0 + d * DAY + 3_600_000,
      seq: d,
      v: 1000 * daily ** d,
      x: daily ** d,
    }));
    await pool.query(
      `insert into equity_points (chain_id, vault, ts, block_number, seq, value_usd, capital_in_usd, capital_out_usd, strategy, return_index)
       select $4, ${hexToBytes('$1::text')}, x.ts, x.seq, x.seq, x.v, 1000, 0, $3, x.x
       from jsonb_to_recordset($2::jsonb) as x(ts bigint, seq bigint, v numeric, x numeric)`,
      [vault, JSON.stringify(points), strategy, chainId],
    );
    return {
      vault,
      chainId,
      owner: vault,
      strategy,
      status: 'earning',
      snapshot: '{}',
      state: '{}',
      lastRecordId: 'x',
      recordsApplied: points.length,
      createdAt: T0,
      updatedAt: points.at(-1)!.ts,
      head: { blockNumber: days, txIndex: 0, logIndex: 0 },
      lastSeq: null,
      held: false,
    };
  }

  /** One batch of `partition`: the vaults' snapshots, then the partition's offset (the runner's order). */
  async function batch(partition: number, rows: SnapshotRow[]): Promise<void> {
    await createProjectionStore(pool).transaction(async (tx) => {
      await tx.lockPartitionAt('vaults-group', 'vaults', partition);
      await tx.upsertSnapshots(rows);
      await tx.savePartition({ groupId: 'vaults-group', topic: 'vaults', partition, nextOffset: '100' });
    });
  }

  it('two vaults earning +0.1 % a day, one partition 35 days behind: liveApr 0.373, sigma 0 (was 0.224, 0.0039)', async () => {
    const ahead = await earning(`0x${'a1'.repeat(20)}`, 45);
    const behind = await earning(`0x${'b2'.repeat(20)}`, 9);
    await batch(0, [ahead]);
    await batch(1, [behind]);
    const { rows } = await pool.query(
      'select partition, folded_to::float8 as at from consumer_offsets order by partition',
    );
    expect(rows).toEqual([
      { partition: 0, at: ahead.updatedAt },
      { partition: 1, at: behind.updatedAt },
    ]);
    const [even] = await refreshStrategyStats(pool, 2);
    expect(even!.historyDays).toBe(44);
    expect(even!.liveApr).toBeCloseTo(((1.001 ** 44 - 1) * 365) / 44, 9);
    expect(even!.liveApr).toBeCloseTo(0.373, 3);
    expect(even!.sigma).toBeCloseTo(0, 9);
  });

  it('a vault quiet in an up-to-date partition keeps its quiet days; held at a gap, it stops at its last record', async () => {
    // A third vault of partition 0, its last record 20 days before the partition's extent: its
    // days after it are quiet days (0), folded — the partition went past them.
    const quiet = await earning(`0x${'c3'.repeat(20)}`, 25);
    const ahead = await earning(`0x${'d4'.repeat(20)}`, 45, 'other');
    await batch(0, [quiet]);
    await batch(0, [ahead]); // the partition's extent moves on; the quiet vault's snapshot stays
    const { rows } = await pool.query<{ at: number }>(
      `select folded_to::float8 as at from consumer_offsets where partition = 0`,
    );
    expect(rows[0]!.at).toBe(ahead.updatedAt);
    const withQuiet = (await refreshStrategyStats(pool, 2))[0]!;
    expect(withQuiet.historyDays).toBe(44);
    expect(withQuiet.sigma).toBeGreaterThan(0); // days 26…44 are its zeros among the +0.1 % days
    // Held at a gap: its later records are not folded, so its days after its last record do not
    // exist (the partition's extent does not count for it).
    await batch(0, [{ ...quiet, held: true }]);
    const held = (await refreshStrategyStats(pool, 2))[0]!;
    expect(held.historyDays).toBe(44);
    expect(held.liveApr).toBeCloseTo(((1.001 ** 44 - 1) * 365) / 44, 9);
    expect(held.sigma).toBeCloseTo(0, 9);
  });

  it('the same address on two chains is two vaults: each its own days, extent and strategy', async () => {
    await pool.query(
      `insert into strategies (id, name, updated_at) values ('twin-a', 'Twin A', 0), ('twin-b', 'Twin B', 0)`,
    );
    const same = `0x${'e5'.repeat(20)}`;
    // Chain 31337: +0.1 % a day for 45 days (partition 2); chain 31338: +0.3 % a day, folded 15 days (partition 3).
    const a = await earning(same, 45, 'twin-a', { chainId: 31337 });
    const b = await earning(same, 15, 'twin-b', { chainId: 31338, daily: 1.003 });
    await batch(2, [a]);
    await batch(3, [b]);
    const stats = new Map((await refreshStrategyStats(pool, 2)).map((s) => [s.id, s]));
    expect(stats.get('twin-a')).toMatchObject({ historyDays: 44 });
    expect(stats.get('twin-a')!.liveApr).toBeCloseTo(((1.001 ** 44 - 1) * 365) / 44, 9);
    expect(stats.get('twin-a')!.sigma).toBeCloseTo(0, 9);
    expect(stats.get('twin-b')).toMatchObject({ historyDays: 14 });
    expect(stats.get('twin-b')!.liveApr).toBeCloseTo(((1.003 ** 14 - 1) * 365) / 14, 9);
    const { rows } = await pool.query<{ chain_id: number; days: number; strategies: string[] }>(
      `select chain_id, count(*)::int as days, array_agg(distinct strategy) as strategies
         from vault_days where vault = ${hexToBytes('$1')} group by chain_id order by chain_id`,
      [same],
    );
    expect(rows).toEqual([
      { chain_id: 31337, days: 44, strategies: ['twin-a'] },
      { chain_id: 31338, days: 14, strategies: ['twin-b'] },
    ]);
  });
});
