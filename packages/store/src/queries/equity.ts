import { hexToBytes, type Pool } from '../pool/index.js';

export interface EquityPointRow {
  /** The vault's chain. */
  chainId: number;
  ts: number;
  /** The block at whose end the point is valued (a vault has at most one point per block). */
  blockNumber: number;
  valueUsd: number;
  capitalInUsd: number;
  capitalOutUsd: number;
  /**
   * The benchmark basket at the point's prices (the vs-holding line, `hold_usd`, migration 0030);
   * null for a point of a state folded before fold version 5, until a rebuild.
   */
  holdValueUsd: number | null;
}

export interface EquityWindow {
  chainId: number;
  /** The vault's address (lowercase). */
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
 * oldest first, every one a real stored state (value, cumulative flows and holding value of the
 * same block end).
 *
 * - A window of at most `points` points is returned whole.
 * - Otherwise, with `points` ≥ 2, the window's **first** point is kept, and the span
 *   [first ts, last ts] is cut into `points − 1` equal time buckets of which the last point of
 *   each non-empty bucket is kept (so the window's **last** point too): at most `points` in all.
 *   Point `ts` falls in bucket ⌊(ts − first) · (points − 1) / (last − first + 1)⌋.
 *   Keeping both ends is what makes the chart's gain net of flows over the window,
 *   Δ(value + out − in) from first to last, that of the full series, whatever the resolution.
 * - `points` = 1 is one bucket: the window's latest point (a current value, no gain).
 *
 * Order is (ts, seq), the primary key's order: ts never decreases as seq grows, so it is the log's.
 *
 * Cost follows `points`, not the history kept: every step is a walk of the primary key
 * (chain_id, vault, ts, seq) — the window's ends, a count stopped at `points` + 1, and per bucket one probe
 * for the last point before the bucket's end (bucket k ends at first + ⌈(k + 1)(span + 1) /
 * (points − 1)⌉) — so an all-time chart of years of points reads ≈ `points` index entries.
 */
export async function equitySeries(pool: Pool, w: EquityWindow): Promise<EquityPointRow[]> {
  const { rows } = await pool.query<EquityPointRow>({
    name: 'reader.equity',
    text: EQUITY_SERIES_SQL,
    values: [w.vault, w.from ?? null, w.to ?? null, w.points, w.chainId],
  });
  return rows;
}

const VAULT = hexToBytes('$1');
const IN_WINDOW = `chain_id = $5::int and vault = ${VAULT} and ts >= coalesce($2::bigint, 0) and ts < coalesce($3::bigint, 9223372036854775807)`;
const COLUMNS = 'ts, seq, block_number, value_usd, capital_in_usd, capital_out_usd, hold_usd';
/** The series' statement (exported for its plan's test). */
export const EQUITY_SERIES_SQL = `with
  n as (select count(*) as n from (select 1 from equity_points where ${IN_WINDOW} limit $4::bigint + 1) c),
  lo as (select ${COLUMNS} from equity_points where ${IN_WINDOW} order by ts, seq limit 1),
  hi as (select ${COLUMNS} from equity_points where ${IN_WINDOW} order by ts desc, seq desc limit 1),
  span as (select lo.ts as first, hi.ts - lo.ts + 1 as width from lo, hi),
  picked as (
    select e.* from n, lateral (select ${COLUMNS} from equity_points where ${IN_WINDOW}) e
    where n.n <= $4::bigint
    union
    select lo.* from n, lo where n.n > $4::bigint and $4::bigint > 1
    union
    select hi.* from n, hi where n.n > $4::bigint and $4::bigint = 1
    union
    select b.* from n, span,
      generate_series(0::bigint, $4::bigint - 2) as k,
      lateral (
        select ${COLUMNS} from equity_points
        where ${IN_WINDOW} and ts < span.first + ((k + 1) * span.width + $4::bigint - 2) / ($4::bigint - 1)
        order by ts desc, seq desc limit 1
      ) b
    where n.n > $4::bigint and $4::bigint > 1
      and b.ts >= span.first + (k * span.width + $4::bigint - 2) / ($4::bigint - 1)
  )
  select $5::int as "chainId", ts, block_number as "blockNumber", round(value_usd, 6)::float8 as "valueUsd",
    round(capital_in_usd, 6)::float8 as "capitalInUsd", round(capital_out_usd, 6)::float8 as "capitalOutUsd",
    round(hold_usd, 6)::float8 as "holdValueUsd"
  from picked order by ts, seq`;
