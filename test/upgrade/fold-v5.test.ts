import { ROLES } from '@vault-yield/devstack/postgres';
import { FOLD_VERSION } from '@vault-yield/domain';
import { createPgPool, migrate, type Pool, projectionFoldVersion } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { startReader, type TestReader } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopics } from '../projector/support.js';
import { createOldSchema, fixtureLog, foldTopic, publishRaw, type RawLog } from './support.js';

/**
 * #46: a projection folded before fold version 5 (the 0027 fixture, written by a build of fold
 * version 4: see fixtures/README.md) upgraded to migration 0030 keeps its figures — no LP figures
 * (`lp` null or absent, positions' `timeInRange` null or absent) and equity points without a
 * holding value (`holdValueUsd` null) — also on what it folds after the upgrade: they cannot be
 * known from the middle of a vault's history. A fresh schema folding the whole log (what
 * `vault-yield rebuild` does) serves them; every other figure is the same.
 */

const CHAIN = 31337;
const OLD = 'at0027v4';

interface Point {
  ts: number;
  blockNumber: number;
  valueUsd: number;
  capitalInUsd: number;
  capitalOutUsd: number;
  holdValueUsd?: number | null;
}

interface Snapshot {
  id: string;
  lp?: unknown;
  positions: { id: string; timeInRange?: unknown }[];
  [k: string]: unknown;
}

let db: TestDatabase;
let pool: Pool;
let topic: string;
let log: RawLog;
let vaults: string[];

const holds = async (schema: string) =>
  (
    await pool.query<{ n: number; held: number }>(
      `select count(*)::int n, count(hold_usd)::int held from ${schema}.equity_points`,
    )
  ).rows[0]!;

/** GET snapshot and equity of every vault, by id. */
async function served(reader: TestReader) {
  const out = new Map<string, { snapshot: Snapshot; equity: Point[] }>();
  for (const vault of vaults) {
    const id = `eip155:${CHAIN}:${vault}`;
    const s = await reader.get(`/v1/vault/${id}/snapshot`);
    const e = await reader.get(`/v1/vault/${id}/equity?points=1000`);
    expect([s.status, e.status], id).toEqual([200, 200]);
    out.set(id, { snapshot: s.body as Snapshot, equity: e.body as Point[] });
  }
  return out;
}

/** The snapshot without its LP figures. */
const withoutLp = ({ lp: _lp, positions, ...rest }: Snapshot) => ({
  ...rest,
  positions: positions.map(({ timeInRange: _t, ...p }) => p),
});
const withoutHold = ({ holdValueUsd: _h, ...p }: Point) => p;

beforeAll(async () => {
  log = fixtureLog();
  topic = uniqueTopic('upgrade-v5');
  await createTopic(kafkaBrokers(), topic);
  db = await createTestDatabase('upgrade_v5');
  pool = createPgPool({ url: db.writerUrl, applicationName: 'upgrade-v5-test', max: 2 });
  // The old schema: migrations up to 0027, as the build before this one applied them.
  await createOldSchema(pool, OLD, topic);
  const writer = createPgPool({
    url: db.writerUrl,
    schema: OLD,
    applicationName: 'upgrade-v5-migrate',
    max: 1,
  });
  try {
    expect((await migrate(writer, OLD, ROLES.reader)).applied).toContain(30);
  } finally {
    await writer.end();
  }
  vaults = (
    await pool.query<{ vault: string }>(`select vault from ${OLD}.vault_snapshot order by vault`)
  ).rows.map((r) => r.vault);
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await db?.drop();
  await deleteTopics();
});

describe('a projection of fold version 4 upgraded to 0030', () => {
  it('keeps fold version 4: its points have no holding value, its snapshots no LP figures, served so', async () => {
    expect(await projectionFoldVersion(pool, OLD)).toBe(4);
    expect(await projectionFoldVersion(pool, db.schema)).toBe(FOLD_VERSION);
    expect(FOLD_VERSION).toBe(5);
    const { n, held } = await holds(OLD);
    expect(n).toBeGreaterThan(0);
    expect(held).toBe(0);
    const reader = await startReader({ ...db, schema: OLD });
    try {
      for (const { snapshot, equity } of (await served(reader)).values()) {
        // Written before fold version 5: the fields are absent.
        expect(snapshot).not.toHaveProperty('lp');
        for (const p of snapshot.positions) expect(p).not.toHaveProperty('timeInRange');
        expect(equity.length).toBeGreaterThan(0);
        for (const p of equity) expect(p.holdValueUsd).toBeNull();
      }
    } finally {
      await reader.stop();
    }
  });

  it('folds on without them (null), while a fresh fold of the whole log (a rebuild) serves them; the rest is the same', async () => {
    await publishRaw(topic, log.folded);
    await publishRaw(topic, log.rest);
    await foldTopic(db.writerUrl, OLD, topic, 'live');
    await foldTopic(db.writerUrl, db.schema, topic, 'fresh');
    expect(await projectionFoldVersion(pool, OLD)).toBe(4);

    const old = await holds(OLD);
    const fresh = await holds(db.schema);
    expect(old.held).toBe(0);
    expect(fresh.held).toBe(fresh.n);
    // The fresh series has a point wherever the old has one, and where the holding value alone moved.
    expect(fresh.n).toBeGreaterThanOrEqual(old.n);

    const readers = [await startReader({ ...db, schema: OLD }), await startReader(db)];
    try {
      const [upgraded, rebuilt] = await Promise.all(readers.map(served));
      let folded = 0;
      for (const [id, u] of upgraded!) {
        const f = rebuilt!.get(id)!;
        // Upgraded: null where the vault folded records after the upgrade, absent where it did not.
        expect(u.snapshot.lp ?? null, id).toBeNull();
        if ('lp' in u.snapshot) folded++;
        for (const p of u.snapshot.positions) expect(p.timeInRange ?? null).toBeNull();
        for (const p of u.equity) expect(p.holdValueUsd).toBeNull();
        // Rebuilt: every figure.
        expect(f.snapshot.lp, id).toEqual(expect.objectContaining({ hold: expect.any(Object) }));
        for (const p of f.snapshot.positions) expect(p.timeInRange).toEqual(expect.any(Object));
        for (const p of f.equity) expect(p.holdValueUsd).toEqual(expect.any(Number));
        // The rest is the same: the snapshot without the LP figures, every upgraded point.
        expect(withoutLp(u.snapshot)).toEqual(withoutLp(f.snapshot));
        const byBlock = new Map(f.equity.map((p) => [p.blockNumber, withoutHold(p)]));
        for (const p of u.equity) expect(withoutHold(p)).toEqual(byBlock.get(p.blockNumber));
        expect(u.equity.at(-1)!.blockNumber).toBeLessThanOrEqual(f.equity.at(-1)!.blockNumber);
      }
      expect(folded).toBeGreaterThan(0);
    } finally {
      for (const reader of readers) await reader.stop();
    }
  });
});
