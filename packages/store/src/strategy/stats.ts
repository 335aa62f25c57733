import type { EquitySample } from '@vault-yield/domain';
import { bytesToHex, type Pool } from '../pool/index.js';

export type { EquitySample };

export interface StrategyStats {
  id: string;
  liveApr: number | null;
  sigma: number | null;
  historyDays: number;
}

/** Every strategy id that has a catalogue entry. */
export async function strategyIds(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>('select id from strategies order by id');
  return rows.map((r) => r.id);
}

/**
 * How far the log has been folded: the block time (Unix ms) of the last folded record across the
 * projection, i.e. the latest vault's `updated_at`; null while no vault has been folded. Realised
 * figures are computed as of this instant, never the wall clock, so they are a function of the
 * log alone (the same whether the projector is behind, in time, or the chain clock runs ahead).
 */
export async function foldExtent(pool: Pool): Promise<number | null> {
  const { rows } = await pool.query<{ at: number | null }>(
    'select max(updated_at)::float8 as at from vault_snapshot',
  );
  return rows[0]?.at ?? null;
}

/**
 * Every vault's equity series, in fold order, each point with the strategy then in force: a
 * vault's sub-periods count for the strategy they ran under, not for the vault's current one.
 */
export async function vaultReturnSeries(pool: Pool): Promise<Map<string, EquitySample[]>> {
  const { rows } = await pool.query<{
    vault: string;
    ts: number;
    v: number;
    i: number;
    o: number;
    s: string;
    x: number;
  }>(
    `select ${bytesToHex('vault')} as vault, ts, value_usd::float8 as v, capital_in_usd::float8 as i, capital_out_usd::float8 as o,
            strategy as s, return_index::float8 as x
     from equity_points order by vault, seq`,
  );
  const series = new Map<string, EquitySample[]>();
  for (const r of rows) {
    let list = series.get(r.vault);
    if (!list) {
      list = [];
      series.set(r.vault, list);
    }
    list.push({
      ts: Number(r.ts),
      valueUsd: r.v,
      capitalInUsd: r.i,
      capitalOutUsd: r.o,
      strategy: r.s,
      returnIndex: r.x,
    });
  }
  return series;
}

/** Writes realised figures; a strategy without enough history gets nulls. One statement. */
export async function writeStrategyStats(
  pool: Pool,
  stats: readonly StrategyStats[],
  now = Date.now(),
): Promise<void> {
  if (stats.length === 0) return;
  await pool.query(
    `update strategies s set live_apr = x.live_apr, sigma = x.sigma, history_days = x.history_days, updated_at = $2
     from jsonb_to_recordset($1::jsonb) as x(id text, live_apr float8, sigma float8, history_days int)
     where s.id = x.id`,
    [
      JSON.stringify(
        stats.map((s) => ({ id: s.id, live_apr: s.liveApr, sigma: s.sigma, history_days: s.historyDays })),
      ),
      now,
    ],
  );
}
