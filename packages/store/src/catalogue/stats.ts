import type { Pool } from '../pool/index.js';

export interface EquitySample {
  ts: number;
  valueUsd: number;
  capitalInUsd: number;
  capitalOutUsd: number;
}

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

/** The equity series of each vault running `strategy`, in fold order. */
export async function strategyEquity(pool: Pool, strategy: string): Promise<Map<string, EquitySample[]>> {
  const { rows } = await pool.query<{ vault: string; ts: number; v: number; i: number; o: number }>(
    `select e.vault, e.ts, e.value_usd::float8 as v, e.capital_in_usd::float8 as i, e.capital_out_usd::float8 as o
     from equity_points e join vault_snapshot s on s.vault = e.vault
     where s.strategy = $1 order by e.vault, e.seq`,
    [strategy],
  );
  const series = new Map<string, EquitySample[]>();
  for (const r of rows) {
    let list = series.get(r.vault);
    if (!list) {
      list = [];
      series.set(r.vault, list);
    }
    list.push({ ts: r.ts, valueUsd: r.v, capitalInUsd: r.i, capitalOutUsd: r.o });
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
