import { hexToBytes, type Pool } from '../pool/index.js';

export interface EquityPointRow {
  ts: number;
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
  /** Maximum number of points returned (≥ 1). */
  points: number;
}

/**
 * A vault's equity series over a window, downsampled in Postgres to at most `points` points,
 * oldest first. The window [first ts, last ts] of the matching points is cut into `points` equal
 * time buckets and the last point (highest seq) of each non-empty bucket is kept, so every point
 * is a real, self-consistent state (value and cumulative flows of the same instant) and the
 * latest point of the window is always included.
 */
export async function equitySeries(pool: Pool, w: EquityWindow): Promise<EquityPointRow[]> {
  const { rows } = await pool.query<EquityPointRow>({
    name: 'reader.equity',
    text: `with pts as (
        select ts, seq, value_usd, capital_in_usd, capital_out_usd from equity_points
        where vault = ${hexToBytes('$1')} and ts >= coalesce($2::bigint, 0) and ts < coalesce($3::bigint, 9223372036854775807)
      ), span as (select min(ts) as lo, max(ts) as hi from pts),
      kept as (
        select distinct on (bucket) ts, seq, value_usd, capital_in_usd, capital_out_usd
        from (select pts.*, ((pts.ts - span.lo) * $4::bigint) / (span.hi - span.lo + 1) as bucket
              from pts, span) b
        order by bucket, seq desc
      )
      select ts, round(value_usd, 6)::float8 as "valueUsd", round(capital_in_usd, 6)::float8 as "capitalInUsd",
        round(capital_out_usd, 6)::float8 as "capitalOutUsd"
      from kept order by seq`,
    values: [w.vault, w.from ?? null, w.to ?? null, w.points],
  });
  return rows;
}
