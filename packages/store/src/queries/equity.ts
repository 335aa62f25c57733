import { hexToBytes, type Pool } from '../pool/index.js';

export interface EquityPointRow {
  ts: number;
  /** The block at whose end the point is valued (a vault has at most one point per block). */
  blockNumber: number;
  valueUsd: number;
  capitalInUsd: number;
  capitalOutUsd: number;
}

export interface EquityWindow {
  vault: string;
  /** Unix ms, inclusive. */
  from?: number;
  /** Unix ms, exclusive. */
  to?: number;
  /** Maximum number of points returned (≥ 1; 1 returns the window's latest point). */
  points: number;
}

/**
 * A vault's equity series over a window, downsampled in Postgres to at most `points` points,
 * oldest first, every one a real stored state (value and cumulative flows of the same block end).
 *
 * - A window of at most `points` points is returned whole.
 * - Otherwise, with `points` ≥ 2, the window's **first** point is kept, and the span
 *   [first ts, last ts] is cut into `points − 1` equal time buckets of which the last point of
 *   each non-empty bucket is kept (so the window's **last** point too): at most `points` in all.
 *   Keeping both ends is what makes the chart's gain net of flows over the window,
 *   Δ(value + out − in) from first to last, that of the full series, whatever the resolution.
 * - `points` = 1 is one bucket: the window's latest point (a current value, no gain).
 *
 * Order is (ts, seq), the primary key's order: ts never decreases as seq grows, so it is the log's.
 */
export async function equitySeries(pool: Pool, w: EquityWindow): Promise<EquityPointRow[]> {
  const { rows } = await pool.query<EquityPointRow>({
    name: 'reader.equity',
    text: `with pts as (
        select ts, seq, block_number, value_usd, capital_in_usd, capital_out_usd,
          row_number() over (order by ts, seq) as i, count(*) over () as n,
          ((ts - min(ts) over ()) * ($4::bigint - 1)) / (max(ts) over () - min(ts) over () + 1) as bucket
        from equity_points
        where vault = ${hexToBytes('$1')} and ts >= coalesce($2::bigint, 0) and ts < coalesce($3::bigint, 9223372036854775807)
      ), marked as (
        select *, lead(bucket) over (order by ts, seq) as next_bucket from pts
      )
      select ts, block_number as "blockNumber", round(value_usd, 6)::float8 as "valueUsd",
        round(capital_in_usd, 6)::float8 as "capitalInUsd", round(capital_out_usd, 6)::float8 as "capitalOutUsd"
      from marked
      where n <= $4::bigint or (i = 1 and $4::bigint > 1) or next_bucket is distinct from bucket
      order by ts, seq`,
    values: [w.vault, w.from ?? null, w.to ?? null, w.points],
  });
  return rows;
}
