/**
 * Test-only fast-check arbitrary of valid vault histories: a list of random steps is turned into
 * records that a correct vault could emit from its current state (withdraw at most what is idle,
 * open with what idle can fund, rebalance with what the position returns, charge exactly the fee
 * due, legal lifecycle moves), with random price and tick moves between them.
 */

import type { Address, VaultRecord, VaultState } from '@vault-yield/domain';
import {
  createVaultState,
  evolve,
  formatFixed,
  getAmountsForLiquidity,
  getLiquidityForAmounts,
  getSqrtRatioAtTick,
  PERFORMANCE_FEE_BPS,
  parseFixed,
  performanceFeeDueRaw,
  SCALE,
} from '@vault-yield/domain';
import fc from 'fast-check';
import { ARB, History, type Market, OTHER, POOL, TICK_2000, USDC, WETH } from './fixtures.js';

const Move = fc.record({
  weth: fc.integer({ min: -1500, max: 1500 }),
  usdc: fc.integer({ min: -30, max: 30 }),
  arb: fc.integer({ min: -2000, max: 2000 }),
  tick: fc.integer({ min: -900, max: 900 }),
});
type Move = typeof Move extends fc.Arbitrary<infer T> ? T : never;
const moveOrNot = fc.option(Move, { nil: null, freq: 2 });
const permille = fc.integer({ min: 0, max: 1000 });

const Step = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('deposit' as const),
      token: fc.constantFrom(WETH, USDC),
      units: fc.integer({ min: 0, max: 5000 }),
      move: moveOrNot,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant('withdraw' as const),
      token: fc.constantFrom(WETH, USDC, ARB),
      permille,
      move: moveOrNot,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant('open' as const),
      below: fc.integer({ min: -400, max: 400 }),
      width: fc.integer({ min: 1, max: 3000 }),
      p0: permille,
      p1: permille,
      move: moveOrNot,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('resize' as const),
      pick: fc.nat(),
      permille: fc.integer({ min: 0, max: 1200 }),
      move: moveOrNot,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('rebalance' as const),
      pick: fc.nat(),
      below: fc.integer({ min: -400, max: 400 }),
      width: fc.integer({ min: 1, max: 3000 }),
      move: moveOrNot,
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('close' as const), pick: fc.nat(), move: moveOrNot }) },
  {
    weight: 1,
    // a share of what the position is owed (also after it was closed: the contract allows it)
    arbitrary: fc.record({ k: fc.constant('collect' as const), pick: fc.nat(), permille, move: moveOrNot }),
  },
  {
    weight: 2,
    // a plain ERC-20 transfer straight to the vault (no vault event): from one wei of dust up
    arbitrary: fc.record({
      k: fc.constant('transfer' as const),
      token: fc.constantFrom(WETH, USDC, ARB),
      amount: fc.oneof(fc.bigInt({ min: 1n, max: 1000n }), fc.bigInt({ min: 1n, max: 10n ** 21n })),
      move: moveOrNot,
    }),
  },
  {
    weight: 2,
    // trading fees accruing to a position (seen only through the holdings)
    arbitrary: fc.record({
      k: fc.constant('accrueFees' as const),
      pick: fc.nat(),
      a0: fc.bigInt({ min: 0n, max: 10n ** 17n }),
      a1: fc.bigInt({ min: 0n, max: 10n ** 8n }),
      move: moveOrNot,
    }),
  },
  {
    weight: 1,
    // an exit that leaves dust: withdraw all of a token but a few wei
    arbitrary: fc.record({
      k: fc.constant('dustExit' as const),
      token: fc.constantFrom(WETH, USDC, ARB),
      left: fc.bigInt({ min: 0n, max: 3n }),
      move: moveOrNot,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('accrue' as const),
      amount: fc.bigInt({ min: 0n, max: 10n ** 20n }),
      move: moveOrNot,
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('claim' as const), permille, move: moveOrNot }) },
  {
    weight: 2,
    // a share of the fee due at the schedule's rate: partial (< 1000), whole, or an over-charge
    arbitrary: fc.record({ k: fc.constant('fee' as const), permille: fc.integer({ min: 1, max: 1200 }) }),
  },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('mark' as const), move: Move }) },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant('lifecycle' as const), exit: fc.boolean(), move: moveOrNot }),
  },
);
export type Step = typeof Step extends fc.Arbitrary<infer T> ? T : never;

export const stepsArb = fc.array(Step, { minLength: 5, maxLength: 60, size: 'large' });

function movePrice(p: string, bp: number): string {
  const next = (parseFixed(p) * BigInt(10_000 + bp)) / 10_000n;
  return formatFixed(next < SCALE / 10_000n ? SCALE / 10_000n : next, 8);
}

function moved(m: Market, mv: Move | null | undefined): Partial<Market> {
  if (!mv) return {};
  return {
    weth: movePrice(m.weth, mv.weth),
    usdc: movePrice(m.usdc, mv.usdc),
    arb: movePrice(m.arb, mv.arb),
    tick: Math.max(TICK_2000 - 20_000, Math.min(TICK_2000 + 20_000, m.tick + mv.tick)),
  };
}

export interface Transition {
  step: Step | null;
  before: VaultState | undefined;
  record: VaultRecord;
  after: VaultState;
}

/** Turns steps into a valid record sequence, folding as it goes. */
export function buildHistory(steps: readonly Step[]): Transition[] {
  const h = new History();
  const out: Transition[] = [];
  const created = h.created();
  let s = createVaultState(created);
  out.push({ step: null, before: undefined, record: created, after: s });
  for (const step of steps) {
    const record = toRecord(h, s, step);
    const after = evolve(s, record);
    out.push({ step, before: s, record, after });
    s = after;
  }
  return out;
}

const idleOf = (s: VaultState, t: Address) => s.idle[t] ?? 0n;
const of = (x: bigint, pm: number) => (x * BigInt(pm)) / 1000n;

function toRecord(h: History, s: VaultState, step: Step): VaultRecord {
  const m = 'move' in step ? moved(h.market, step.move) : {};
  const ids = Object.keys(s.positions);
  const pick = (n: number) => (ids.length ? s.positions[ids[n % ids.length]!]! : null);
  switch (step.k) {
    case 'deposit': {
      const unit = step.token === WETH ? 10n ** 15n : 10n ** 6n;
      return h.deposit(step.token, BigInt(step.units) * unit, m);
    }
    case 'withdraw': {
      const amount = of(idleOf(s, step.token), step.permille);
      return h.withdrawal(step.token, amount, m);
    }
    case 'open': {
      const tick = (m.tick ?? h.market.tick) + step.below;
      const [lower, upper] = [tick - Math.floor(step.width / 2), tick + Math.ceil(step.width / 2)];
      const sp = getSqrtRatioAtTick(m.tick ?? h.market.tick);
      const [sa, sb] = [getSqrtRatioAtTick(lower), getSqrtRatioAtTick(upper)];
      const l = getLiquidityForAmounts(
        sp,
        sa,
        sb,
        of(idleOf(s, WETH), step.p0),
        of(idleOf(s, USDC), step.p1),
      );
      const a = getAmountsForLiquidity(sp, sa, sb, l);
      return h.record(
        'position.opened',
        {
          positionId: String(s.records),
          pool: POOL,
          tickLower: lower,
          tickUpper: upper,
          liquidity: l.toString(),
          amount0: a.amount0.toString(),
          amount1: a.amount1.toString(),
        },
        m,
      );
    }
    case 'resize': {
      const p = pick(step.pick);
      if (!p) return h.mark(m);
      const sp = getSqrtRatioAtTick(m.tick ?? h.market.tick);
      const nextL = of(p.liquidity, step.permille);
      const now = getAmountsForLiquidity(sp, p.sqrtLower, p.sqrtUpper, p.liquidity);
      const then = getAmountsForLiquidity(sp, p.sqrtLower, p.sqrtUpper, nextL);
      const d0 = then.amount0 - now.amount0;
      const d1 = then.amount1 - now.amount1;
      if (d0 > idleOf(s, WETH) || d1 > idleOf(s, USDC)) return h.mark(m);
      return h.record(
        'position.resized',
        {
          positionId: p.id,
          liquidity: nextL.toString(),
          amount0Delta: d0.toString(),
          amount1Delta: d1.toString(),
        },
        m,
      );
    }
    case 'rebalance': {
      const p = pick(step.pick);
      if (!p) return h.mark(m);
      const tickNow = m.tick ?? h.market.tick;
      const sp = getSqrtRatioAtTick(tickNow);
      const outA = getAmountsForLiquidity(sp, p.sqrtLower, p.sqrtUpper, p.liquidity);
      const tick = tickNow + step.below;
      const [lower, upper] = [tick - Math.floor(step.width / 2), tick + Math.ceil(step.width / 2)];
      const [sa, sb] = [getSqrtRatioAtTick(lower), getSqrtRatioAtTick(upper)];
      const l = getLiquidityForAmounts(sp, sa, sb, outA.amount0, outA.amount1);
      const inA = getAmountsForLiquidity(sp, sa, sb, l);
      return h.record(
        'position.rebalanced',
        {
          positionId: p.id,
          tickLower: lower,
          tickUpper: upper,
          liquidity: l.toString(),
          amount0Out: outA.amount0.toString(),
          amount1Out: outA.amount1.toString(),
          amount0In: inA.amount0.toString(),
          amount1In: inA.amount1.toString(),
        },
        m,
      );
    }
    case 'close': {
      const p = pick(step.pick);
      if (!p) return h.mark(m);
      const sp = getSqrtRatioAtTick(m.tick ?? h.market.tick);
      const a = getAmountsForLiquidity(sp, p.sqrtLower, p.sqrtUpper, p.liquidity);
      return h.record(
        'position.closed',
        { positionId: p.id, amount0: a.amount0.toString(), amount1: a.amount1.toString() },
        m,
      );
    }
    case 'collect': {
      const p = pick(step.pick);
      const held = p ? h.held.positions[p.id] : undefined;
      if (!p || !held) return h.mark(m);
      return h.record(
        'fees.collected',
        {
          positionId: p.id,
          amount0: of(held.owed0, step.permille).toString(),
          amount1: of(held.owed1, step.permille).toString(),
        },
        m,
      );
    }
    case 'transfer':
      // at most 10^3 WETH / 10^6 USDC / 10^3 ARB: float views stay exact to the micro-dollar
      h.transfer(step.token, step.token === USDC ? (step.amount % 10n ** 12n) + 1n : step.amount);
      return h.mark(m);
    case 'accrueFees': {
      const p = pick(step.pick);
      if (p && h.held.positions[p.id]) h.accrueFees(p.id, step.a0, step.a1);
      return h.mark(m);
    }
    case 'dustExit': {
      const idle = idleOf(s, step.token);
      return h.withdrawal(step.token, idle > step.left ? idle - step.left : 0n, m);
    }
    case 'accrue':
      return h.record('rewards.accrued', { rewardToken: ARB, amount: step.amount.toString() }, m);
    case 'claim':
      return h.record(
        'rewards.claimed',
        { rewardToken: ARB, amount: of(s.pendingRewards[ARB] ?? 0n, step.permille).toString() },
        m,
      );
    case 'fee': {
      // at unchanged prices: a share of the fee due, in whichever token can pay it
      for (const token of [USDC, WETH]) {
        const raw = of(performanceFeeDueRaw(s, token, PERFORMANCE_FEE_BPS), step.permille);
        if (raw > 0n && raw <= idleOf(s, token)) {
          return h.record('fee.charged', { token, amount: raw.toString(), recipient: OTHER });
        }
      }
      return h.mark();
    }
    case 'mark':
      return h.mark(m);
    case 'lifecycle':
      // leave a suspension or an exit at the first chance, so histories spend time in every status
      if (s.suspension) return h.record('resumed', {}, m);
      if (s.exitRequested) return h.record('exit.completed', {}, m);
      return step.exit ? h.record('exit.requested', {}, m) : h.record('suspended', { reason: 'guardian' }, m);
  }
}
