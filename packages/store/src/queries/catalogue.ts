import type { Pool } from '../pool/index.js';

export interface StrategyRow {
  id: string;
  name: string;
  description: string;
  riskNote: string;
  pairs: { a: string; b: string; venues: string[] }[];
  liveApr: number | null;
  sigma: number | null;
  /** The strategy's LP figures (migration 0031): every one null while liveApr is null. */
  lp: {
    feeApr: number | null;
    rewardApr: number | null;
    timeInRange: number | null;
    rebalancesPerWeek: number | null;
    divergenceApr: number | null;
    maxDrawdown: number | null;
  };
}

export interface UniverseAssetRow {
  chainId: number;
  address: string;
  symbol: string;
  name: string;
  category: 'major' | 'stable' | 'stock token' | 'meme';
  decimals: number;
  venues: string[];
  liquidityUsd: number;
}

export interface UniversePairRow {
  chainId: number;
  a: string;
  b: string;
  tokenA: string;
  tokenB: string;
  venues: string[];
  tvlUsd: number;
  emissions: boolean;
}

export interface ScreenMetaRow {
  version: string;
  screenedAt: number;
}

/** Upper bound on catalogue and universe responses; they are served whole up to it. */
export const CATALOGUE_MAX_ROWS = 1000;

export async function strategyList(pool: Pool): Promise<StrategyRow[]> {
  const { rows } = await pool.query<StrategyRow>({
    name: 'reader.strategies',
    text: `select id, name, description, risk_note as "riskNote", pairs, live_apr as "liveApr", sigma,
        json_build_object('feeApr', lp_fee_apr, 'rewardApr', lp_reward_apr, 'timeInRange', lp_time_in_range,
          'rebalancesPerWeek', lp_rebalances_per_week, 'divergenceApr', lp_divergence_apr,
          'maxDrawdown', lp_max_drawdown) as lp
      from strategies order by display_order, id limit ${CATALOGUE_MAX_ROWS}`,
  });
  return rows;
}

export async function universeAssets(pool: Pool): Promise<UniverseAssetRow[]> {
  const { rows } = await pool.query<UniverseAssetRow>({
    name: 'reader.universe-assets',
    text: `select chain_id as "chainId", address, symbol, name, category, decimals, venues,
        liquidity_usd as "liquidityUsd"
      from universe_assets order by rank, chain_id, address limit ${CATALOGUE_MAX_ROWS}`,
  });
  return rows;
}

export async function universePairs(pool: Pool): Promise<UniversePairRow[]> {
  const { rows } = await pool.query<UniversePairRow>({
    name: 'reader.universe-pairs',
    text: `select chain_id as "chainId", a, b, token_a as "tokenA", token_b as "tokenB", venues,
        tvl_usd as "tvlUsd", emissions
      from universe_pairs order by rank, chain_id, token_a, token_b limit ${CATALOGUE_MAX_ROWS}`,
  });
  return rows;
}

/** The screen run the universe currently reflects, or null before the first screen. */
export async function screenMeta(pool: Pool): Promise<ScreenMetaRow | null> {
  const { rows } = await pool.query<ScreenMetaRow>({
    name: 'reader.screen-meta',
    text: `select version, screened_at as "screenedAt" from screen_meta where id`,
  });
  return rows[0] ?? null;
}
