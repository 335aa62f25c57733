import {
  aggregateDailyReturns,
  type DailyReturn,
  dailyReturnsByStrategy,
  type EquitySample,
  refOf,
  vaultId,
} from '@vault-yield/domain';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, hexToBytes, type Pool } from '../pool/index.js';
import { rollStrategyDays } from './days.js';
import { vaultReturnSeries } from './stats.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);

/**
 * Strategy figures from the daily rollups equal those of every point (#49 item 1): whatever the
 * order in which days complete, re-folds that rewrite a vault's points, a vault held at a gap (its
 * extent moving back) and released (points folded into days already rolled).
 */
describe('rollStrategyDays: the daily rollups give the figures of every point (Postgres)', () => {
  let db: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase('daily_rollups');
    pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'daily-rollups', max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  /** Empties the points and the rollups (the points first: their delete notes stale vaults). */
  async function clear(): Promise<void> {
    for (const t of ['equity_points', 'vault_days', 'vault_days_carry', 'strategy_days', 'vault_days_stale'])
      await pool.query(`delete from ${t}`);
  }

  interface Pt {
    /** The vault's id (its chain and address). */
    id: string;
    ts: number;
    seq: number;
    value: number;
    x: number;
    strategy: string;
  }
  async function insert(points: readonly Pt[]): Promise<void> {
    if (points.length === 0) return;
    await pool.query(
      `insert into equity_points (chain_id, vault, ts, block_number, seq, value_usd, capital_in_usd, capital_out_usd, strategy, return_index)
       select x.chain, ${hexToBytes('x.vault')}, x.ts, x.seq, x.seq, x.value, 1000, 0, x.strategy, x.x
       from jsonb_to_recordset($1::jsonb)
         as x(chain int, vault text, ts bigint, seq bigint, value numeric, x numeric, strategy text)`,
      [
        JSON.stringify(
          points.map(({ id, ...p }) => ({ ...p, chain: refOf(id).chainId, vault: refOf(id).vault })),
        ),
      ],
    );
  }

  /** Every strategy's daily returns read from every point (the definition), vaults in order. */
  async function fromEveryPoint(extents: ReadonlyMap<string, number>): Promise<Map<string, number[]>> {
    const members = new Map<string, DailyReturn[][]>();
    for (const [vault, points] of await vaultReturnSeries(pool)) {
      const asOf = extents.get(vault);
      if (asOf === undefined) continue;
      for (const [strategy, days] of dailyReturnsByStrategy(points as EquitySample[], { asOf })) {
        const list = members.get(strategy) ?? [];
        list.push(days);
        members.set(strategy, list);
      }
    }
    const out = new Map<string, number[]>();
    for (const [strategy, series] of members) {
      const days = aggregateDailyReturns(series).map((d) => d.r);
      if (days.length > 0) out.set(strategy, days);
    }
    return out;
  }

  const vaultArb = fc.record({
    start: fc.integer({ min: 0, max: 2 * DAY }),
    steps: fc.array(
      fc.record({
        gap: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2 * DAY })),
        bps: fc.integer({ min: -300, max: 300 }),
        value: fc.oneof(fc.constant(0.5), fc.integer({ min: 1, max: 5_000 })),
        strategy: fc.constantFrom('wide', 'narrow'),
      }),
      { minLength: 1, maxLength: 25 },
    ),
  });

  it('equal after every refresh as days complete, a re-fold, a hold and a release (property)', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(vaultArb, { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 3 * DAY }), { minLength: 2, maxLength: 6 }),
        fc.nat(),
        async (vaults, advances, pick) => {
          run++;
          await clear();
          // Every vault's whole history, in fold order. Vaults pair up on one address: the
          // first of a pair on chain 1, the second on chain 2 (two vaults, never one).
          let seq = 0;
          const all: Pt[][] = vaults.map((v, i) => {
            const address = `0x${run.toString(16).padStart(8, '0')}${String(i >> 1).padStart(32, '0')}`;
            const id = vaultId(1 + (i % 2), address);
            let ts = T0 + v.start;
            let x = 1;
            return v.steps.map((s) => {
              ts += s.gap;
              x *= 1 + s.bps / 10_000;
              return { id, ts, seq: ++seq, value: s.value, x, strategy: s.strategy };
            });
          });
          const names = all.map((p) => p[0]!.id);
          const end = Math.max(...all.flat().map((p) => p.ts));
          const extents = new Map<string, number>();
          const folded = new Map<string, number>(); // points folded so far, per vault
          const check = async () => {
            const rolled = await rollStrategyDays(pool, extents);
            expect(rolled.strategies).toEqual(await fromEveryPoint(extents));
          };
          /** The fold reaches `at`: every vault's points by then are stored, its extent moves there. */
          const foldTo = async (at: number, except?: string) => {
            for (const pts of all) {
              const vault = pts[0]!.id;
              if (vault === except) continue;
              const done = folded.get(vault) ?? 0;
              const next = pts.filter((p, i) => i >= done && p.ts <= at);
              await insert(next);
              folded.set(vault, done + next.length);
              if (done + next.length > 0) extents.set(vault, at);
            }
          };

          let at = T0;
          for (const a of advances) {
            at = Math.min(end + 3 * DAY, at + a);
            await foldTo(at);
            await check();
          }
          // A re-fold rewrites a vault's points (deleted, stored again with new seqs).
          const refolded = names[pick % names.length]!;
          const { rows } = await pool.query<{ n: string }>(
            `with gone as (delete from equity_points where chain_id = $2 and vault = ${hexToBytes('$1::text')} returning *)
             select count(*)::text as n from gone`,
            [refOf(refolded).vault, refOf(refolded).chainId],
          );
          const kept = all.find((p) => p[0]!.id === refolded)!.slice(0, Number(rows[0]!.n));
          await insert(kept.map((p) => ({ ...p, seq: ++seq })));
          await check();
          // A vault held at a gap: its extent goes back to its own last point while the others go on.
          const held = names[(pick + 1) % names.length]!;
          const heldPts = all.find((p) => p[0]!.id === held)!;
          const lastFolded = heldPts[(folded.get(held) ?? 0) - 1];
          if (lastFolded) extents.set(held, lastFolded.ts);
          at += 2 * DAY;
          await foldTo(at, held);
          await check();
          // Released: its held points fold, some into days already rolled for it before the hold.
          await foldTo(at);
          await check();
          // Records of a vault missing from the log while its partition goes on (its quiet days
          // rolled), then arriving: points folded into days already rolled, no hold seen between.
          const missing = names[(pick + 2) % names.length]!;
          at += 2 * DAY;
          await foldTo(at, missing);
          if (extents.has(missing)) extents.set(missing, at);
          await check();
          await foldTo(at + DAY);
          await check();
          expect(extents.size).toBeGreaterThan(0);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('reads each point once: a second refresh with nothing completed reads none', async () => {
    await clear();
    const vault = vaultId(1, `0x${'c3'.repeat(20)}`);
    await insert(
      Array.from({ length: 40 }, (_, d) => ({
        id: vault,
        ts: T0 + d * DAY + 3_600_000,
        seq: d + 1,
        value: 1000,
        x: 1.001 ** d,
        strategy: 'even',
      })),
    );
    const extents = new Map([[vault, T0 + 39 * DAY + 3_600_000]]);
    const first = await rollStrategyDays(pool, extents);
    expect(first.points).toBe(39); // the last day is not complete yet
    expect(first.strategies.get('even')).toHaveLength(38);
    const again = await rollStrategyDays(pool, extents);
    expect(again.points).toBe(0);
    expect(again.days).toBe(0);
    expect(again.strategies).toEqual(first.strategies);
    // The next day completes: its points only.
    extents.set(vault, T0 + 41 * DAY);
    const next = await rollStrategyDays(pool, extents);
    expect(next.points).toBe(1);
    expect(next.strategies.get('even')).toHaveLength(40);
  });
});
