import { createLogger } from '@vault-yield/common';
import {
  type EquityPoint,
  encodeBinaryRecord,
  equityPoint,
  foldRecord,
  formatFixed,
  holdValueUsd,
  type LpView,
  type Micros,
  type SnapshotView,
  toLpView,
  toPositionViews,
  type VaultRecord,
  type VaultState,
} from '@vault-yield/domain';
import type { LogBatch } from '@vault-yield/log';
import { createPgPool, createProjectionStore, type Pool } from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { afterAll, describe, expect, it } from 'vitest';
import { applyBatch } from './apply.js';
import { type Decoded, decode } from './rows.js';

/**
 * The LP figures through the projector (#46): the equity points' hold_usd is the mapping's
 * holdValueUsd of the block end each point is, the stored snapshot's `lp` is the mapping's
 * toLpView of the vault's last block end — the same however batches cut the log (states reloaded
 * from their stored JSON mid-block) — and a vault whose stored state has no LP figures (folded
 * before fold version 5) goes on with hold_usd null and `lp` null.
 */

const log = createLogger({ name: 'projector-lp', level: 'silent' });

/** `records[from, to)` as one batch of partition 0, offsets their indexes. */
function batchOf(records: readonly VaultRecord[], from: number, to: number): LogBatch<Decoded> {
  return {
    topic: 't',
    partition: 0,
    messages: records.slice(from, to).map((r, i) => {
      const value = encodeBinaryRecord(r);
      return {
        partition: 0,
        offset: String(from + i),
        key: null,
        value,
        timestamp: 0,
        decoded: decode(value),
      };
    }),
    commit: { groupId: 'g', topic: 't', partition: 0, nextOffset: String(to) },
    highWatermark: String(records.length),
  };
}

/**
 * The generator's blocks are 2 s apart: 10 minutes apart instead (feeds updated at each block as
 * before), so a vault's history spans days and the APRs (a day of funded history) are not null.
 */
function stretched(records: readonly VaultRecord[]): VaultRecord[] {
  const b0 = records[0]?.blockNumber ?? 0;
  return records.map((r) => {
    const ts = 1_700_000_000 + (r.blockNumber - b0) * 600;
    return {
      ...r,
      blockTimestamp: ts,
      context: { ...r.context, tokens: r.context.tokens.map((t) => ({ ...t, priceUpdatedAt: ts })) },
    } as VaultRecord;
  });
}

/** What the fold makes of `records` in process: each vault's last block end, and its equity points with their state. */
function folded(records: readonly VaultRecord[]) {
  const states = new Map<string, VaultState>();
  const ends = new Map<string, VaultState>();
  const micros = new Map<string, Micros>();
  const points: { row: EquityPoint; state: VaultState }[] = [];
  for (const r of records) {
    const before = states.get(r.vault);
    const after = foldRecord(before, r);
    states.set(r.vault, after);
    if (!r.lastInBlock) continue;
    const point = equityPoint(before ? (micros.get(r.vault) ?? null) : null, after);
    micros.set(r.vault, point.micros);
    if (point.row) points.push({ row: point.row, state: after });
    ends.set(r.vault, after);
  }
  return { ends, points };
}

const json = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

interface StoredPoint {
  vault: string;
  seq: string;
  hold: string | null;
}

async function apply(
  p: Pool,
  records: readonly VaultRecord[],
  batchSize: number,
  from = 0,
  to = records.length,
): Promise<void> {
  const store = createProjectionStore(p);
  for (let at = from; at < to; at += batchSize) {
    const end = Math.min(to, at + batchSize);
    // No state cache: every batch reloads its vaults from their stored JSON, mid-block ones too.
    const r = await store.transaction((tx) => applyBatch(tx, batchOf(records, at, end), log));
    expect(r.kind).toBe('applied');
  }
}

const storedPoints = async (p: Pool) =>
  (
    await p.query<StoredPoint>(
      `select '0x' || encode(e.vault, 'hex') as vault, e.seq::text, e.hold_usd::text as hold
         from equity_points e order by e.vault, e.seq`,
    )
  ).rows;

const storedSnapshots = async (p: Pool) =>
  new Map(
    (
      await p.query<{ vault: string; snapshot: SnapshotView }>('select vault, snapshot from vault_snapshot')
    ).rows.map((r) => [r.vault, r.snapshot]),
  );

describe('LP figures through the projector', () => {
  const dbs: TestDatabase[] = [];
  const pools: Pool[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await Promise.all(dbs.map((d) => d.drop()));
  });
  const database = async (label: string) => {
    const db = await createTestDatabase(label);
    dbs.push(db);
    const p = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'lp-test', max: 2 });
    pools.push(p);
    return p;
  };

  // Busy vaults (up to 3 records a block), tokens sent straight to them, days of block time.
  const records = stretched(
    createHistoryGenerator({ vaults: 5, seed: 46, recordsPerVaultBlock: 3, transfers: true }).take(900),
  );
  const expected = folded(records);

  it('hold_usd of every point is holdValueUsd of its block end, and the snapshot lp is toLpView, however batches cut the log', async () => {
    expect(records.some((r) => !r.lastInBlock)).toBe(true);
    const whole = await database('lp_whole');
    await apply(whole, records, records.length);
    const points = await storedPoints(whole);

    // The series the fold makes, with the mapping's holding value at each point (6 dp, exact text).
    const byVault = (a: { vault: string; seq: number }, b: { vault: string; seq: number }) =>
      a.vault < b.vault ? -1 : a.vault > b.vault ? 1 : a.seq - b.seq;
    expect(points).toEqual(
      expected.points
        .map(({ row }) => row)
        .sort(byVault)
        .map((row) => ({ vault: row.vault, seq: String(row.seq), hold: row.holdValueUsd })),
    );
    for (const { row, state } of expected.points)
      expect(row.holdValueUsd).toBe(formatFixed(holdValueUsd(state), 6));
    expect(points.every((p) => p.hold !== null)).toBe(true);
    // The holding line is not the value line (a vault's positions move apart from its basket).
    const apart = expected.points.filter(({ row }) => row.holdValueUsd !== row.valueUsd).length;
    expect(apart).toBeGreaterThan(expected.points.length / 2);

    const snapshots = await storedSnapshots(whole);
    expect(snapshots.size).toBe(expected.ends.size);
    const lps: LpView[] = [];
    for (const [vault, state] of expected.ends) {
      const s = snapshots.get(vault)!;
      const lp = toLpView(state)!;
      expect(s.lp).toEqual(json(lp));
      expect(s.positions.map((p) => p.timeInRange)).toEqual(
        json(toPositionViews(state).map((p) => p.timeInRange)),
      );
      lps.push(lp);
    }
    // The history moves every figure somewhere: fees, rewards, divergence, time out of range,
    // rebalances, drawdown, the APRs after a day.
    expect(lps.some((l) => l.tradingFees.earnedUsd > 0 && l.tradingFees.apr !== null)).toBe(true);
    expect(lps.some((l) => l.rewards.claimedUsd > 0)).toBe(true);
    expect(lps.some((l) => l.divergence.realisedUsd !== 0)).toBe(true);
    expect(lps.some((l) => l.timeInRange.share !== null && l.timeInRange.share < 1)).toBe(true);
    expect(lps.some((l) => l.rebalances.count > 0)).toBe(true);
    expect(lps.some((l) => l.drawdown.max > 0)).toBe(true);

    // Batches of 7 cut blocks, and a vault's records within one, at many places: the same rows.
    const cut = await database('lp_cut');
    await apply(cut, records, 7);
    expect(await storedPoints(cut)).toEqual(points);
    const again = await storedSnapshots(cut);
    for (const [vault, s] of snapshots) {
      expect(again.get(vault)?.lp).toEqual(s.lp);
      expect(again.get(vault)?.positions).toEqual(s.positions);
    }
  });

  it('a vault whose stored state has no LP figures (folded before fold version 5) goes on with hold_usd null and lp null', async () => {
    const p = await database('lp_v4');
    const half = Math.floor(records.length / 2);
    await apply(p, records, 50, 0, half);
    const before = (await storedPoints(p)).length;
    // What a projection folded before fold version 5 stored: no `lp` in the state nor in the snapshot.
    await p.query(
      `update vault_snapshot set state = (state::jsonb - 'lp')::json, snapshot = (snapshot::jsonb - 'lp')::json`,
    );
    await p.query('update equity_points set hold_usd = null');
    await apply(p, records, 50, half);
    const points = await storedPoints(p);
    expect(points.length).toBeGreaterThan(before);
    expect(points.every((x) => x.hold === null)).toBe(true);
    for (const [vault, s] of await storedSnapshots(p)) {
      const moved = records.slice(half).some((r) => r.vault === vault && r.lastInBlock);
      if (!moved) continue;
      expect(s.lp, vault).toBeNull();
      for (const position of s.positions) expect(position.timeInRange).toBeNull();
    }
  });
});
