import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, hexToBytes, type Pool } from '../pool/index.js';
import { EQUITY_SERIES_SQL } from './equity.js';
import { type EquityPointRow, equitySeries } from './index.js';

/** A stored point, figures in integer micro-dollars so sums compare exactly. */
interface Stored {
  ts: number;
  blockNumber: number;
  value: number;
  capIn: number;
  capOut: number;
  /** The holding value (hold_usd, migration 0030); null: a point of a state folded before fold version 5. */
  hold: number | null;
}

const usd = (micro: number) => `${Math.trunc(micro / 1e6)}.${String(micro % 1e6).padStart(6, '0')}`;
const micro = (x: number) => Math.round(x * 1e6);
/** The chain the series are read on; every vault also has points on OTHER (which must never show). */
const CHAIN = 10;
const OTHER = 8453;
const served = (p: Stored): EquityPointRow => ({
  chainId: CHAIN,
  ts: p.ts,
  blockNumber: p.blockNumber,
  valueUsd: Number(usd(p.value)),
  capitalInUsd: Number(usd(p.capIn)),
  capitalOutUsd: Number(usd(p.capOut)),
  holdValueUsd: p.hold === null ? null : Number(usd(p.hold)),
});
/** The chart's gain net of flows from `a` to `b`: Δvalue − (Δin − Δout), in micro-dollars. */
const gain = (a: Stored, b: Stored) => b.value - a.value - (b.capIn - a.capIn - (b.capOut - a.capOut));
const gainServed = (a: EquityPointRow, b: EquityPointRow) =>
  micro(b.valueUsd) -
  micro(a.valueUsd) -
  (micro(b.capitalInUsd) - micro(a.capitalInUsd) - (micro(b.capitalOutUsd) - micro(a.capitalOutUsd)));

describe('equitySeries: downsampling keeps the window’s ends', () => {
  let db: TestDatabase;
  let writer: Pool;
  let reader: Pool;
  let vaults = 0;
  const nextVault = () => `0x${(++vaults).toString(16).padStart(40, '0')}`;

  /** Stores `points` for a fresh vault, seq in their order (ts must not decrease). */
  async function store(points: readonly Stored[]): Promise<string> {
    const vault = nextVault();
    // The same address on another chain, with a history of its own (a vault is (chain, address)).
    await writer.query(
      `insert into equity_points (chain_id, vault, ts, block_number, seq, value_usd, capital_in_usd, capital_out_usd)
       select $2::int, ${hexToBytes('$1::text')}, 1000 * g, g, g, 999999, 0, 0 from generate_series(1, 3) g`,
      [vault, OTHER],
    );
    await writer.query(
      `insert into equity_points (chain_id, vault, ts, block_number, seq, value_usd, capital_in_usd, capital_out_usd,
                                  hold_usd)
       select ${CHAIN}, ${hexToBytes('$1::text')}, ts, block_number, seq, value_usd::numeric, capital_in_usd::numeric,
              capital_out_usd::numeric, hold_usd::numeric
       from jsonb_to_recordset($2::jsonb) as x(ts bigint, block_number bigint, seq bigint, value_usd text,
         capital_in_usd text, capital_out_usd text, hold_usd text)`,
      [
        vault,
        JSON.stringify(
          points.map((p, i) => ({
            ts: p.ts,
            block_number: p.blockNumber,
            seq: i + 1,
            value_usd: usd(p.value),
            capital_in_usd: usd(p.capIn),
            capital_out_usd: usd(p.capOut),
            hold_usd: p.hold === null ? null : usd(p.hold),
          })),
        ),
      ],
    );
    return vault;
  }

  beforeAll(async () => {
    db = await createTestDatabase('equity');
    writer = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'test', max: 2 });
    reader = createPgPool({ url: db.readerUrl, schema: db.schema, applicationName: 'test-reader', max: 2 });
  });
  afterAll(async () => {
    await reader?.end();
    await writer?.end();
    await db?.drop();
  });

  it('the issue’s example: a funded first point is kept, so the gain net of flows is 200, not 100', async () => {
    const M = 1e6;
    const pts: Stored[] = [
      { ts: 0, blockNumber: 10, value: 1000 * M, capIn: 1000 * M, capOut: 0, hold: 1000 * M }, // funded
      { ts: 40, blockNumber: 14, value: 1050 * M, capIn: 1000 * M, capOut: 0, hold: 990 * M },
      { ts: 60, blockNumber: 16, value: 2100 * M, capIn: 2000 * M, capOut: 0, hold: 1985_500_001 }, // deposit 1,000
      { ts: 100, blockNumber: 20, value: 2200 * M, capIn: 2000 * M, capOut: 0, hold: 2010 * M },
    ];
    const vault = await store(pts);
    const two = await equitySeries(reader, { chainId: CHAIN, vault, points: 2 });
    expect(two).toEqual([served(pts[0]!), served(pts[3]!)]);
    expect(gainServed(two[0]!, two[1]!)).toBe(200 * M);
    // The holding line keeps its ends too: the vault's lead over holding, first to last, is exact.
    expect(two.map((p) => p.holdValueUsd)).toEqual([1000, 2010]);
    expect(gain(pts[0]!, pts[3]!)).toBe(200 * M);
    // points − 1 = 2 buckets over [0, 100]: [0, 50] keeps 40, [51, 100] keeps 100; 0 comes first.
    expect(await equitySeries(reader, { chainId: CHAIN, vault, points: 3 })).toEqual(
      [pts[0], pts[1], pts[3]].map((p) => served(p!)),
    );
    expect(await equitySeries(reader, { chainId: CHAIN, vault, points: 4 })).toEqual(pts.map(served)); // fits: whole
    expect(await equitySeries(reader, { chainId: CHAIN, vault, points: 1 })).toEqual([served(pts[3]!)]); // latest
    expect(await equitySeries(reader, { chainId: CHAIN, vault, from: 1, to: 100, points: 2 })).toEqual([
      served(pts[1]!),
      served(pts[2]!),
    ]);
    expect(await equitySeries(reader, { chainId: CHAIN, vault, from: 101, points: 2 })).toEqual([]);
  });

  const series = fc
    .array(
      fc.record({
        dt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50 })), // equal times happen
        value: fc.integer({ min: 0, max: 1e12 }),
        dIn: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1e11 })),
        dOut: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1e11 })),
        hold: fc.option(fc.integer({ min: 0, max: 1e12 }), { nil: null, freq: 4 }),
      }),
      { maxLength: 40 },
    )
    .map((steps) => {
      let ts = 1_000;
      let capIn = 0;
      let capOut = 0;
      return steps.map((s, i): Stored => {
        ts += s.dt;
        capIn += s.dIn;
        capOut += s.dOut;
        return { ts, blockNumber: 100 + i, value: s.value, capIn, capOut, hold: s.hold };
      });
    });
  const bound = fc.option(fc.integer({ min: 990, max: 3_100 }), { nil: undefined });

  it('any points, window and series: ends kept, ≤ points, a subsequence, gain net of flows exact (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        series,
        bound,
        bound,
        fc.integer({ min: 0, max: 1000 }),
        async (pts, from, to, seed) => {
          const vault = await store(pts);
          const win = pts.filter(
            (p) => (from === undefined || p.ts >= from) && (to === undefined || p.ts < to),
          );
          const points = 1 + (seed % (win.length + 2)); // 1 .. N + 2
          const got = await equitySeries(reader, { chainId: CHAIN, vault, from, to, points });

          expect(got.length).toBeLessThanOrEqual(points);
          // A subsequence of the stored window, in order (block numbers are unique per vault).
          let at = -1;
          for (const p of got) {
            const i = win.findIndex((s) => s.blockNumber === p.blockNumber);
            expect(i).toBeGreaterThan(at);
            expect(p).toEqual(served(win[i]!));
            at = i;
          }
          if (win.length === 0) return void expect(got).toEqual([]);
          expect(got.at(-1)).toEqual(served(win.at(-1)!)); // the latest point, always
          if (win.length <= points) expect(got).toEqual(win.map(served));
          if (points === 1) expect(got).toHaveLength(1);
          if (points >= 2 && win.length >= 2) {
            expect(got[0]).toEqual(served(win[0]!));
            expect(gainServed(got[0]!, got.at(-1)!)).toBe(gain(win[0]!, win.at(-1)!));
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  /**
   * The downsampling's definition, as a scan of every point of the window (the query served before
   * the bucket probes): the new query must choose exactly the same points.
   */
  const REFERENCE = `with pts as (
      select ts, seq, block_number, value_usd, capital_in_usd, capital_out_usd, hold_usd,
        row_number() over (order by ts, seq) as i, count(*) over () as n,
        ((ts - min(ts) over ()) * ($4::bigint - 1)) / (max(ts) over () - min(ts) over () + 1) as bucket
      from equity_points
      where chain_id = $5::int and vault = ${hexToBytes('$1')} and ts >= coalesce($2::bigint, 0) and ts < coalesce($3::bigint, 9223372036854775807)
    ), marked as (
      select *, lead(bucket) over (order by ts, seq) as next_bucket from pts
    )
    select $5::int as "chainId", ts, block_number as "blockNumber", round(value_usd, 6)::float8 as "valueUsd",
      round(capital_in_usd, 6)::float8 as "capitalInUsd", round(capital_out_usd, 6)::float8 as "capitalOutUsd",
      round(hold_usd, 6)::float8 as "holdValueUsd"
    from marked
    where n <= $4::bigint or (i = 1 and $4::bigint > 1) or next_bucket is distinct from bucket
    order by ts, seq`;
  const spread = fc
    .array(fc.record({ dt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5_000_000 })) }), {
      minLength: 1,
      maxLength: 120,
    })
    .map((steps) => {
      let ts = 1_700_000_000_000;
      return steps.map((s, i): Stored => {
        ts += s.dt;
        return {
          ts,
          blockNumber: 100 + i,
          value: (i * 7919) % 10_000,
          capIn: i,
          capOut: 0,
          hold: i % 5 === 0 ? null : (i * 104_729) % 10_000,
        };
      });
    });

  it('chooses exactly the points of the full-window definition, for any series, window and points (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        spread,
        fc.integer({ min: 1, max: 130 }),
        fc.option(fc.integer({ min: 0, max: 119 }), { nil: undefined }),
        fc.option(fc.integer({ min: 0, max: 119 }), { nil: undefined }),
        async (pts, points, a, b) => {
          const vault = await store(pts);
          const at = (i: number | undefined, shift: number) =>
            i === undefined ? undefined : (pts[Math.min(i, pts.length - 1)]?.ts ?? 0) + shift;
          const from = at(a, 0);
          const to = at(b, 1);
          const got = await equitySeries(reader, { chainId: CHAIN, vault, from, to, points });
          const { rows } = await reader.query(REFERENCE, [vault, from ?? null, to ?? null, points, CHAIN]);
          expect(got).toEqual(rows);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads what `points` asks for, not what the history kept: 50,000 points cost as 5,000 (buffers touched)', async () => {
    const kept = async (n: number) => {
      const vault = nextVault();
      await writer.query(
        `insert into equity_points (chain_id, vault, ts, block_number, seq, value_usd, capital_in_usd, capital_out_usd)
         select ${CHAIN}, ${hexToBytes('$1::text')}, 1700000000000::bigint + g * 120000::bigint, g, g, g, 0, 0
         from generate_series(1, $2::int) g`,
        [vault, n],
      );
      return vault;
    };
    const short = await kept(5_000);
    const long = await kept(50_000);
    await writer.query('analyze equity_points');
    // Shared buffers the statement touched (the plan's root counts its children's).
    const touched = async (sql: string, vault: string) => {
      const { rows } = await reader.query(`explain (analyze, buffers, format json) ${sql}`, [
        vault,
        null,
        null,
        200,
        CHAIN,
      ]);
      const json = JSON.stringify(rows[0]);
      return [...json.matchAll(/"Shared Hit Blocks":(\d+)/g)].reduce((a, m) => Math.max(a, Number(m[1])), 0);
    };
    for (const vault of [short, long]) {
      const served200 = await equitySeries(reader, { chainId: CHAIN, vault, points: 200 });
      expect(served200).toHaveLength(200);
      expect(served200).toEqual((await reader.query(REFERENCE, [vault, null, null, 200, CHAIN])).rows);
    }
    const [a, b] = [await touched(EQUITY_SERIES_SQL, short), await touched(EQUITY_SERIES_SQL, long)];
    expect(a).toBeGreaterThan(0);
    expect(b).toBeLessThan(1.5 * a);
    // The definition's scan of the window grows with it (what the probes replace).
    const [ra, rb] = [await touched(REFERENCE, short), await touched(REFERENCE, long)];
    expect(rb).toBeGreaterThan(5 * ra);
  });
});
