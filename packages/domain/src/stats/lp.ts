import type { z } from 'zod';
import { serializedState } from '../fold/serialize.js';
import type { StrategyLp } from '../fold/state.js';
import { MIN_APR_HISTORY_MS, YEAR_MS } from '../mapping/lp.js';
import { divRound, microsToNumber } from '../math/fixed.js';
import type { DailyReturn } from './daily.js';
import { maxDrawdown } from './drawdown.js';
import { realisedStats } from './stats.js';

export type { StrategyLp };

/** A week of block time, ms: the unit of `rebalancesPerWeek`. */
export const WEEK_MS = 7n * 86_400_000n;

/**
 * A strategy's LP figures over its member vaults (issue #46 item 8; `GET /v1/strategies` `lp`),
 * realised only: each a fraction (0.12 = 12 %) or a count per week, 6 dp; null while the
 * strategy's liveApr is null (too little history) and where the denominator is empty.
 */
export interface StrategyLpFigures {
  /** Σ trading fees earned · 365 days / Σ ∫ value dt. */
  feeApr: number | null;
  /** Σ rewards earned · 365 days / Σ ∫ value dt. */
  rewardApr: number | null;
  /** Σ block time in range / Σ block time open. */
  timeInRange: number | null;
  /** Σ rebalances / Σ funded block time, per 7 days. */
  rebalancesPerWeek: number | null;
  /** Σ realised divergence · 365 days / Σ ∫ value dt (negative: a loss against holding). */
  divergenceApr: number | null;
  /** Largest fall of the strategy's chained daily returns (those of liveApr and sigma) from a peak. */
  maxDrawdown: number | null;
}

/** Every figure null: a strategy without enough history. */
export const NO_STRATEGY_LP: Readonly<StrategyLpFigures> = Object.freeze({
  feeApr: null,
  rewardApr: null,
  timeInRange: null,
  rebalancesPerWeek: null,
  divergenceApr: null,
  maxDrawdown: null,
});

/** The member vaults' figures under one strategy summed, exactly (bigint USD and capital-time, integer ms and counts). */
export function sumStrategyLp(entries: Iterable<StrategyLp>): StrategyLp {
  let feesUsd = 0n;
  let rewardsUsd = 0n;
  let capitalMs = 0n;
  let divergenceUsd = 0n;
  let fundedMs = 0;
  let openMs = 0;
  let inRangeMs = 0;
  let rebalances = 0;
  for (const e of entries) {
    feesUsd += e.feesUsd;
    rewardsUsd += e.rewardsUsd;
    capitalMs += e.capitalMs;
    divergenceUsd += e.divergenceUsd;
    fundedMs += e.fundedMs;
    openMs += e.openMs;
    inRangeMs += e.inRangeMs;
    rebalances += e.rebalances;
  }
  return { feesUsd, rewardsUsd, capitalMs, fundedMs, openMs, inRangeMs, rebalances, divergenceUsd };
}

/** num / den as a JSON number of 6 dp, one rounding (half-even) of the exact ratio; den > 0. */
const ratio = (num: bigint, den: bigint): number => microsToNumber(divRound(num * 1_000_000n, den));

/**
 * A strategy's LP figures from its member vaults' `byStrategy` entries for it (a vault folded
 * before fold version 5 has none: it contributes nothing) and its daily returns (those of
 * `realisedStats`, whose rule says when there is enough history):
 * - feeApr, rewardApr, divergenceApr = Σ feesUsd, Σ rewardsUsd, Σ divergenceUsd (realised) ·
 *   YEAR / Σ capitalMs — USD over time-weighted capital, as a vault's `tradingFees.apr`; null until
 *   the members were funded a day in all (MIN_APR_HISTORY_MS) or while Σ capitalMs is 0;
 * - timeInRange = Σ inRangeMs / Σ openMs; null while Σ openMs is 0;
 * - rebalancesPerWeek = Σ rebalances · 7 days / Σ fundedMs; null until a day of funded time;
 * - maxDrawdown of the chained daily returns (`maxDrawdown`).
 * Each exact until its one rounding to 6 dp. Every figure null while liveApr is null.
 */
export function strategyLpFigures(
  entries: Iterable<StrategyLp>,
  daily: readonly (DailyReturn | number)[],
  opts: { minDailyReturns?: number } = {},
): StrategyLpFigures {
  if (realisedStats(daily, opts).liveApr === null) return { ...NO_STRATEGY_LP };
  const s = sumStrategyLp(entries);
  const funded = s.fundedMs >= MIN_APR_HISTORY_MS;
  const apr = (usd: bigint) => (funded && s.capitalMs > 0n ? ratio(usd * YEAR_MS, s.capitalMs) : null);
  return {
    feeApr: apr(s.feesUsd),
    rewardApr: apr(s.rewardsUsd),
    timeInRange: s.openMs > 0 ? ratio(BigInt(s.inRangeMs), BigInt(s.openMs)) : null,
    rebalancesPerWeek: funded ? ratio(BigInt(s.rebalances) * WEEK_MS, BigInt(s.fundedMs)) : null,
    divergenceApr: apr(s.divergenceUsd),
    maxDrawdown: Math.round(maxDrawdown(daily) * 1e6) / 1e6,
  };
}

/** A stored state's `lp.byStrategy`, as fold/serialize.ts writes it (the schema is the state's own). */
const byStrategyJson = serializedState.shape.lp.unwrap().shape.byStrategy;
type StrategyLpJson = z.output<typeof byStrategyJson>[string];

/**
 * A vault's `byStrategy` from its stored state JSON (`lp.byStrategy`: bigints as decimal strings),
 * validated by the state's own schema; throws a ZodError on a malformed document.
 */
export function parseStrategyLp(json: unknown): Record<string, StrategyLp> {
  const parsed = byStrategyJson.parse(json);
  const out: Record<string, StrategyLp> = {};
  for (const [strategy, e] of Object.entries(parsed)) out[strategy] = strategyLpOf(e);
  return out;
}

function strategyLpOf(e: StrategyLpJson): StrategyLp {
  return {
    feesUsd: BigInt(e.feesUsd),
    rewardsUsd: BigInt(e.rewardsUsd),
    capitalMs: BigInt(e.capitalMs),
    fundedMs: e.fundedMs,
    openMs: e.openMs,
    inRangeMs: e.inRangeMs,
    rebalances: e.rebalances,
    divergenceUsd: BigInt(e.divergenceUsd),
  };
}
