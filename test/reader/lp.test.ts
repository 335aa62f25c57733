import { ok } from '@vault-yield/client';
import {
  type EquityPoint,
  equityPoint,
  foldRecord,
  type Micros,
  snapshotView,
  toLpView,
  toPositionViews,
  type VaultRecord,
  type VaultState,
  vaultId,
} from '@vault-yield/domain';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { startReader, type TestReader } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopics, projector, publish } from '../projector/support.js';

/**
 * The LP figures as served (#46): a history published to the log and folded by the projector;
 * GET snapshot serves `lp` and each position's `timeInRange` as the fold's mapping makes them of
 * the vault's last block end, and GET equity serves each point's `holdValueUsd` — the whole
 * series and a downsampled / all-time one (its first and last points with theirs). Every answer
 * goes through the OpenAPI validator (startReader), and the typed client reads the fields.
 */

const CHAIN = 31337;

/** Blocks 10 minutes apart (the generator's are 2 s): days of history, so the APRs are not null. */
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

const json = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

interface ServedPoint {
  chainId: number;
  ts: number;
  blockNumber: number;
  valueUsd: number;
  capitalInUsd: number;
  capitalOutUsd: number;
  holdValueUsd: number | null;
}

const records = stretched(
  createHistoryGenerator({ vaults: 6, seed: 4646, recordsPerVaultBlock: 2, transfers: true }).take(1_200),
);

/** The fold in process: each vault's last block end and its equity points, as served (numbers). */
const ends = new Map<string, VaultState>();
const series = new Map<string, ServedPoint[]>();
{
  const states = new Map<string, VaultState>();
  const micros = new Map<string, Micros>();
  for (const r of records) {
    const before = states.get(r.vault);
    const after = foldRecord(before, r);
    states.set(r.vault, after);
    if (!r.lastInBlock) continue;
    ends.set(r.vault, after);
    const point = equityPoint(before ? (micros.get(r.vault) ?? null) : null, after);
    micros.set(r.vault, point.micros);
    if (!point.row) continue;
    const row: EquityPoint = point.row;
    series.set(r.vault, [
      ...(series.get(r.vault) ?? []),
      {
        chainId: row.chainId,
        ts: row.ts,
        blockNumber: row.blockNumber,
        valueUsd: Number(row.valueUsd),
        capitalInUsd: Number(row.capitalInUsd),
        capitalOutUsd: Number(row.capitalOutUsd),
        holdValueUsd: row.holdValueUsd === null ? null : Number(row.holdValueUsd),
      },
    ]);
  }
}

let db: TestDatabase;
let r: TestReader;

beforeAll(async () => {
  const topic = uniqueTopic('reader-lp');
  await createTopic(kafkaBrokers(), topic);
  await publish(kafkaBrokers(), topic, records);
  db = await createTestDatabase('reader-lp');
  const p = projector({ brokers: kafkaBrokers(), url: db.writerUrl, schema: db.schema, topic, group: 'lp' });
  await p.start();
  try {
    await p.caughtUp();
  } finally {
    await p.stop();
  }
  r = await startReader(db);
}, 180_000);

afterAll(async () => {
  await r?.stop();
  await db?.drop();
  await deleteTopics();
});

describe('GET /v1/vault/{id}/snapshot: the LP figures', () => {
  it('serves lp and positions’ timeInRange as the fold’s mapping makes them of the last block end', async () => {
    expect(ends.size).toBe(6);
    let apr = 0;
    for (const [vault, state] of ends) {
      const res = await r.get(`/v1/vault/${vaultId(CHAIN, vault)}/snapshot`);
      expect(res.status).toBe(200);
      const body = snapshotView.parse(res.body);
      const lp = toLpView(state);
      expect(lp).not.toBeNull();
      expect(body.lp).toEqual(json(lp));
      expect(body.positions.map((p) => p.timeInRange)).toEqual(
        json(toPositionViews(state).map((p) => p.timeInRange)),
      );
      // The attribution adds up to netUsd (in micro-dollars), as the definitions say.
      const a = body.lp!.attribution;
      const parts = [a.tradingFeesUsd, a.rewardsUsd, a.performanceFeesUsd, a.lossesUsd, a.priceUsd];
      expect(parts.reduce((s, x) => s + Math.round(x * 1e6), 0)).toBe(Math.round(body.netUsd * 1e6));
      expect(Math.round(body.lp!.hold.leadUsd * 1e6)).toBe(
        Math.round(body.valueUsd * 1e6) - Math.round(body.lp!.hold.valueUsd * 1e6),
      );
      if (body.lp!.tradingFees.apr !== null) apr++;
    }
    expect(apr).toBeGreaterThan(0);
  });

  it('the typed client reads them', async () => {
    const [vault] = [...ends.keys()];
    const s = await ok(
      await r.client.v1.vault[':address'].snapshot.$get({ param: { address: vaultId(CHAIN, vault!) } }),
    );
    const lp = s.lp;
    if (!lp) throw new Error('no lp');
    expect(typeof lp.hold.valueUsd).toBe('number');
    expect(lp.timeInRange.openMs).toBeGreaterThanOrEqual(lp.timeInRange.inRangeMs);
    for (const p of s.positions)
      expect(p.timeInRange === null || typeof p.timeInRange?.openMs === 'number').toBe(true);
  });
});

describe('GET /v1/vault/{id}/equity: holdValueUsd', () => {
  it('every point carries the holding value of its block end; the last is the snapshot’s hold', async () => {
    for (const [vault, expected] of series) {
      const id = vaultId(CHAIN, vault);
      const res = await r.get(`/v1/vault/${id}/equity?points=1000`);
      expect(res.status).toBe(200);
      expect(expected.length).toBeLessThanOrEqual(1000);
      expect(res.body).toEqual(expected);
      const last = (res.body as ServedPoint[]).at(-1)!;
      const snapshot = (await r.get(`/v1/vault/${id}/snapshot`)).body as {
        lp: { hold: { valueUsd: number } };
      };
      expect(last.holdValueUsd).toBe(snapshot.lp.hold.valueUsd);
    }
  });

  it('a downsampled (all-time) chart keeps the hold line with its points: the window’s first and last with theirs', async () => {
    let cut = 0;
    for (const [vault, expected] of series) {
      const byBlock = new Map(expected.map((p) => [p.blockNumber, p]));
      for (const q of ['?points=5', '?points=2', '', `?from=${expected[1]?.ts ?? 0}&points=3`]) {
        const res = await r.get(`/v1/vault/${vaultId(CHAIN, vault)}/equity${q}`);
        expect(res.status).toBe(200);
        const points = res.body as ServedPoint[];
        for (const p of points) expect(p).toEqual(byBlock.get(p.blockNumber));
        const window = q.startsWith('?from') ? expected.slice(1) : expected;
        expect(points.at(-1)).toEqual(window.at(-1));
        if (window.length >= 2) expect(points[0]).toEqual(window[0]);
        if (points.length < window.length) cut++;
        expect(points.every((p) => p.holdValueUsd !== null)).toBe(true);
      }
    }
    expect(cut).toBeGreaterThan(0);
  });
});
