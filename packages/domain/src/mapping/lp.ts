import { currentDrawdown, feesEarnedRaw, scaledUsd, unrealisedDivergenceUsd } from '../fold/lp.js';
import { type Address, type LpState, positionList, type RangeTime, type VaultState } from '../fold/state.js';
import { pendingRewardsUsd, positionAmounts, positionOwedUsd } from '../fold/valuation.js';
import { divRound, type Fixed, microsToNumber, toMicros } from '../math/fixed.js';
import type { LpView, TimeInRangeView } from '../views/index.js';
import { wholeTokens } from './amounts.js';

/** A year of block time, ms: the APRs' annualisation (365 days, as liveApr). */
export const YEAR_MS = 365n * 86_400_000n;
/** The APRs wait for a day of block time with the vault worth at least 1 USD. */
export const MIN_APR_HISTORY_MS = 86_400_000;

const m = (x: Fixed) => microsToNumber(toMicros(x));

/** A share of block time (6 dp); null before any time open. */
export function timeInRangeOf(r: RangeTime): TimeInRangeView {
  return {
    share: r.openMs > 0 ? Math.round((r.inRangeMs / r.openMs) * 1e6) / 1e6 : null,
    inRangeMs: r.inRangeMs,
    openMs: r.openMs,
  };
}

/** earned / time-weighted capital, annualised (a fraction, 6 dp); null before enough history. */
function aprOf(lp: LpState, earnedUsd: Fixed): number | null {
  if (lp.fundedMs < MIN_APR_HISTORY_MS || lp.capitalMs <= 0n) return null;
  // earned · YEAR / ∫V dt in micro-units of the fraction, one half-even rounding of the exact
  // ratio (as the catalogue's per-strategy APRs: a one-vault strategy reads the same figure).
  return microsToNumber(divRound(earnedUsd * YEAR_MS * 1_000_000n, lp.capitalMs));
}

/** The benchmark basket (raw · 10^18) at the state's prices: what holding what was put in is worth. */
export function holdValueUsd(s: Pick<VaultState, 'benchmark' | 'tokens'>): Fixed {
  let v = 0n;
  for (const token in s.benchmark) v += scaledUsd(s, token as Address, s.benchmark[token as Address]!);
  return v;
}

/** Every token's amount held now: idle + positions at the pool price + owed + pending rewards. */
function heldRaw(s: VaultState): Record<Address, bigint> {
  const out: Record<Address, bigint> = { ...s.idle };
  const plus = (t: Address, x: bigint) => {
    if (x !== 0n) out[t] = (out[t] ?? 0n) + x;
  };
  for (const p of positionList(s.positions)) {
    const a = positionAmounts(s, p);
    plus(p.token0, a.amount0 + p.owed0);
    plus(p.token1, a.amount1 + p.owed1);
  }
  for (const t in s.pendingRewards) plus(t as Address, s.pendingRewards[t as Address]!);
  return out;
}

const sorted = (...maps: Readonly<Record<Address, unknown>>[]): Address[] =>
  [...new Set(maps.flatMap((x) => Object.keys(x)))].sort() as Address[];

/**
 * The LP figures of a block-end state (the snapshot's `shownState`); null for a state folded before
 * fold version 5. Definitions: views/index.ts `lpView` and docs/lp-figures.md. USD at 6 dp; the
 * attribution is computed in whole micro-dollars so its five parts add up to netUsd exactly.
 */
export function toLpView(s: VaultState): LpView | null {
  const lp = s.lp;
  if (!lp) return null;
  const sym = (t: Address) => s.tokens[t]?.symbol ?? '';
  const dec = (t: Address) => s.tokens[t]?.decimals ?? 0;

  const hold = holdValueUsd(s);
  const valueMicros = toMicros(s.valueUsd);
  const holdMicros = toMicros(hold);

  let uncollected = 0n;
  const owed: Record<Address, bigint> = {};
  for (const p of positionList(s.positions)) {
    uncollected += positionOwedUsd(s, p);
    if (p.owed0 !== 0n) owed[p.token0] = (owed[p.token0] ?? 0n) + p.owed0;
    if (p.owed1 !== 0n) owed[p.token1] = (owed[p.token1] ?? 0n) + p.owed1;
  }
  const earned = feesEarnedRaw(s, lp);

  const net = valueMicros + toMicros(s.capitalOutUsd) - toMicros(s.capitalInUsd);
  const fees = toMicros(lp.feesUsd);
  const rewards = toMicros(lp.rewardsUsd);
  const taxed = -toMicros(s.taxedUsd);
  const lost = -toMicros(s.lostUsd);

  const unrealised = unrealisedDivergenceUsd(s);
  const held = heldRaw(s);

  return {
    hold: { valueUsd: microsToNumber(holdMicros), leadUsd: microsToNumber(valueMicros - holdMicros) },
    tradingFees: {
      earnedUsd: microsToNumber(fees),
      uncollectedUsd: m(uncollected),
      apr: aprOf(lp, lp.feesUsd),
      tokens: sorted(earned, lp.collected).map((t) => ({
        token: t,
        symbol: sym(t),
        earned: wholeTokens(earned[t] ?? 0n, dec(t)),
        collected: wholeTokens(lp.collected[t] ?? 0n, dec(t)),
        uncollected: wholeTokens(owed[t] ?? 0n, dec(t)),
      })),
    },
    rewards: {
      earnedUsd: microsToNumber(rewards),
      claimedUsd: m(lp.claimedUsd),
      pendingUsd: m(pendingRewardsUsd(s)),
      apr: aprOf(lp, lp.rewardsUsd),
      tokens: sorted(lp.claimed, s.pendingRewards).map((t) => ({
        token: t,
        symbol: sym(t),
        claimed: wholeTokens(lp.claimed[t] ?? 0n, dec(t)),
        pending: wholeTokens(s.pendingRewards[t] ?? 0n, dec(t)),
      })),
    },
    attribution: {
      tradingFeesUsd: microsToNumber(fees),
      rewardsUsd: microsToNumber(rewards),
      performanceFeesUsd: microsToNumber(taxed),
      lossesUsd: microsToNumber(lost),
      priceUsd: microsToNumber(net - fees - rewards - taxed - lost),
    },
    divergence: {
      usd: microsToNumber(toMicros(lp.divergenceUsd) + toMicros(unrealised)),
      realisedUsd: m(lp.divergenceUsd),
      unrealisedUsd: m(unrealised),
    },
    timeInRange: timeInRangeOf(lp),
    rebalances: {
      count: lp.rebalances,
      swaps: lp.swaps,
      costUsd: microsToNumber(toMicros(lp.swapCostUsd)),
      swapFeesUsd: microsToNumber(toMicros(lp.swapFeesUsd)),
      // In micro-dollars, so the two parts add up to the cost exactly.
      priceImpactUsd: microsToNumber(toMicros(lp.swapCostUsd) - toMicros(lp.swapFeesUsd)),
    },
    drawdown: { max: m(lp.maxDrawdown), current: m(currentDrawdown(s)) },
    tokens: sorted(held, lp.flowsIn, lp.flowsOut).map((t) => {
      const h = held[t] ?? 0n;
      const i = lp.flowsIn[t] ?? 0n;
      const o = lp.flowsOut[t] ?? 0n;
      return {
        token: t,
        symbol: sym(t),
        held: wholeTokens(h, dec(t)),
        in: wholeTokens(i, dec(t)),
        out: wholeTokens(o, dec(t)),
        pnl: wholeTokens(h - i + o, dec(t)),
      };
    }),
  };
}
