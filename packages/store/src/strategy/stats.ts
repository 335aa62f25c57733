import {
  type EquitySample,
  parseStrategyLp,
  type StrategyLp,
  type StrategyLpFigures,
  vaultId,
} from '@vault-yield/domain';
import { bytesToHex, type Pool } from '../pool/index.js';

export type { EquitySample };

export interface StrategyStats {
  id: string;
  liveApr: number | null;
  sigma: number | null;
  historyDays: number;
}

/** A strategy's realised figures with its LP figures (migration 0031). */
export interface StrategyFigures extends StrategyStats {
  lp: StrategyLpFigures;
}

/** Every strategy id that has a catalogue entry. */
export async function strategyIds(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>('select id from strategies order by id');
  return rows.map((r) => r.id);
}

/**
 * How far the projection has been folded: the block time (Unix ms) of the last folded record
 * across it, i.e. the latest vault's `updated_at`; null while no vault has been folded. Realised
 * figures count each vault up to its own extent (`vaultFoldExtents`), never the wall clock, so
 * they are a function of the log alone (the same whether the projector is behind, in time, or the
 * chain clock runs ahead).
 */
export async function foldExtent(pool: Pool): Promise<number | null> {
  const { rows } = await pool.query<{ at: number | null }>(
    'select max(updated_at)::float8 as at from vault_snapshot',
  );
  return rows[0]?.at ?? null;
}

/**
 * How far each vault has been folded (Unix ms, block time), by vault id (`eip155:{chainId}:{address}`): its partition's extent —
 * the block time of the last record folded in the partition its records are folded from
 * (`consumer_offsets.folded_to`, written with the offset; migration 0024) — so a vault that is
 * merely quiet in an up-to-date partition keeps its quiet days. A vault held at a gap stops at its
 * own last folded record: its later records are not folded, and its days after it do not exist
 * yet. A vault whose partition is not known yet (its snapshot written before migration 0024,
 * until its next record) counts up to the projection's latest record, as before.
 */
export async function vaultFoldExtents(pool: Pool): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ chain_id: number; vault: string; at: number }>(
    `with parts as (select topic, partition, max(folded_to) as folded_to from consumer_offsets
                    group by topic, partition),
          latest as (select max(updated_at) as at from vault_snapshot)
     select s.chain_id, s.vault, (case when s.held then s.updated_at
                           when s.log_partition is null then latest.at
                           else greatest(s.updated_at, p.folded_to) end)::float8 as at
     from vault_snapshot s cross join latest
     left join parts p on p.topic = s.log_topic and p.partition = s.log_partition`,
  );
  return new Map(rows.map((r) => [vaultId(r.chain_id, r.vault), Number(r.at)]));
}

/**
 * Every vault's equity series, by vault id, in fold order, each point with the strategy then in
 * force: a vault's sub-periods count for the strategy they ran under, not for the vault's current
 * one. Vaults in (chain, address) order — the order the daily rollups aggregate their members in
 * (days.ts), so both sum the same floats.
 */
export async function vaultReturnSeries(pool: Pool): Promise<Map<string, EquitySample[]>> {
  const { rows } = await pool.query<{
    chain_id: number;
    vault: string;
    ts: number;
    v: number;
    i: number;
    o: number;
    s: string;
    x: number;
  }>(
    `select chain_id, ${bytesToHex('vault')} as vault, ts, value_usd::float8 as v, capital_in_usd::float8 as i,
            capital_out_usd::float8 as o, strategy as s, return_index::float8 as x
     from equity_points order by chain_id, vault, seq`,
  );
  const series = new Map<string, EquitySample[]>();
  for (const r of rows) {
    const id = vaultId(r.chain_id, r.vault);
    let list = series.get(id);
    if (!list) {
      list = [];
      series.set(id, list);
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

/**
 * Every vault's LP figures by the strategy in force when they were earned, by strategy: the
 * `lp.byStrategy` of the state its snapshot shows (domain `shownState`: inside a block, the
 * vault at its previous block end — a batch cut never shows half a block; a vault created in
 * the open block, nothing yet). A vault folded before fold version 5 has none and adds nothing.
 * One query over the vault rows (their state JSON, never the equity points), vaults in (chain,
 * address) order.
 */
export async function vaultStrategyLp(pool: Pool): Promise<Map<string, StrategyLp[]>> {
  const { rows } = await pool.query<{ by: unknown }>(
    `select case when v.open is null then v.own
                 when json_typeof(v.open->'end') = 'object' then v.open->'end'->'lp'->'byStrategy'
                 when v.open->'end' is null then v.own -- an open block as fold version 2 wrote it
            end as by
     from (select chain_id, vault, state->'lp'->'byStrategy' as own, state->'blockStart' as open
           from vault_snapshot) v
     order by v.chain_id, v.vault`,
  );
  const out = new Map<string, StrategyLp[]>();
  for (const { by } of rows) {
    if (by === null) continue;
    for (const [strategy, entry] of Object.entries(parseStrategyLp(by))) {
      let list = out.get(strategy);
      if (!list) {
        list = [];
        out.set(strategy, list);
      }
      list.push(entry);
    }
  }
  return out;
}

/**
 * Writes realised figures, and the LP figures where given (absent: null, as a strategy without
 * enough history has); a strategy without enough history gets nulls. One statement.
 */
export async function writeStrategyStats(
  pool: Pool,
  stats: readonly (StrategyStats | StrategyFigures)[],
  now = Date.now(),
): Promise<void> {
  if (stats.length === 0) return;
  await pool.query(
    `update strategies s set live_apr = x.live_apr, sigma = x.sigma, history_days = x.history_days,
       lp_fee_apr = x.fee_apr, lp_reward_apr = x.reward_apr, lp_time_in_range = x.time_in_range,
       lp_rebalances_per_week = x.rebalances_per_week, lp_divergence_apr = x.divergence_apr,
       lp_max_drawdown = x.max_drawdown, updated_at = $2
     from jsonb_to_recordset($1::jsonb) as x(id text, live_apr float8, sigma float8, history_days int,
       fee_apr float8, reward_apr float8, time_in_range float8, rebalances_per_week float8,
       divergence_apr float8, max_drawdown float8)
     where s.id = x.id`,
    [
      JSON.stringify(
        stats.map((s) => {
          const lp = 'lp' in s ? s.lp : null;
          return {
            id: s.id,
            live_apr: s.liveApr,
            sigma: s.sigma,
            history_days: s.historyDays,
            fee_apr: lp?.feeApr ?? null,
            reward_apr: lp?.rewardApr ?? null,
            time_in_range: lp?.timeInRange ?? null,
            rebalances_per_week: lp?.rebalancesPerWeek ?? null,
            divergence_apr: lp?.divergenceApr ?? null,
            max_drawdown: lp?.maxDrawdown ?? null,
          };
        }),
      ),
      now,
    ],
  );
}
