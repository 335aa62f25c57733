/**
 * The LP figures (issue #46) against independent computations from the records alone: fees earned
 * from the collects and the owed amounts the contexts carry, time in range from each record's pool
 * tick, drawdown from the chained return index, token PnL from the payloads — and the attribution
 * adding up to netUsd exactly.
 */

import {
  buildHistory,
  eth,
  History,
  oneBlock,
  POOL,
  stepsArb,
  TICK_2000,
  USDC,
  usdc,
  WETH,
} from '@vault-yield/test-kit/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MIN_APR_HISTORY_MS, toLpView } from '../mapping/lp.js';
import { toSnapshotView } from '../mapping/snapshot.js';
import { divRound, parseFixed, SCALE, tokenValue, toMicros } from '../math/fixed.js';
import { getAmountsForLiquidity, getLiquidityForAmounts } from '../math/liquidity-amounts.js';
import { isInRange } from '../math/price.js';
import { getSqrtRatioAtTick } from '../math/tick-math.js';
import type { VaultRecord } from '../records/envelope.js';
import { snapshotView } from '../views/index.js';
import { createVaultState, evolve, foldRecord } from './evolve.js';
import { deserializeState, serializeState } from './serialize.js';
import type { VaultState } from './state.js';

const runs = { numRuns: 60 };
const foldAll = (s: VaultState | undefined, rs: readonly VaultRecord[]): VaultState =>
  rs.reduce<VaultState | undefined>((acc, r) => foldRecord(acc, r), s)!;

/** `s` with a position around the price (WETH 2000) of 0.5 WETH + 1,000 USDC opened, a block of its own. */
function open(h: History, s: VaultState, positionId: string) {
  const [lower, upper] = [TICK_2000 - 600, TICK_2000 + 600];
  const sp = getSqrtRatioAtTick(TICK_2000);
  const [sa, sb] = [getSqrtRatioAtTick(lower), getSqrtRatioAtTick(upper)];
  const l = getLiquidityForAmounts(sp, sa, sb, eth(0.5), usdc(1000));
  const a = getAmountsForLiquidity(sp, sa, sb, l);
  const opened = evolve(
    s,
    h.record('position.opened', {
      positionId,
      pool: POOL,
      tickLower: lower,
      tickUpper: upper,
      liquidity: l.toString(),
      amount0: a.amount0.toString(),
      amount1: a.amount1.toString(),
    }),
  );
  return { s: opened, lower, upper, l, a };
}

/** A funded vault with one position around the price (WETH 2000), opened in a block of its own. */
function withPosition(h = new History()) {
  const s = foldAll(undefined, [h.created(), h.deposit(WETH, eth(1)), h.deposit(USDC, usdc(2000))]);
  return { h, ...open(h, s, '1') };
}

const lpOf = (s: VaultState) => {
  const v = toLpView(s);
  if (!v) throw new Error('no LP figures');
  return v;
};

describe('LP figures on hand-made histories', () => {
  it('fees earned are valued at the price when they appear, and collecting them moves nothing', () => {
    const { h, s: s0 } = withPosition();
    h.accrueFees('1', eth(0.01), 0n);
    let s = evolve(s0, h.mark()); // WETH 2000: 20 USD earned
    h.accrueFees('1', eth(0.01), usdc(5));
    s = evolve(s, h.mark({ weth: '3000' })); // 30 + 5 USD
    expect(lpOf(s).tradingFees.earnedUsd).toBe(55);
    expect(lpOf(s).tradingFees.uncollectedUsd).toBe(65); // 0.02 WETH at 3000 + 5
    s = evolve(
      s,
      h.record(
        'fees.collected',
        { positionId: '1', amount0: eth(0.02).toString(), amount1: usdc(5).toString() },
        { weth: '4000' },
      ),
    );
    const v = lpOf(s);
    expect(v.tradingFees.earnedUsd).toBe(55);
    expect(v.tradingFees.uncollectedUsd).toBe(0);
    expect(v.tradingFees.tokens).toEqual([
      { token: USDC, symbol: 'USDC', earned: '5', collected: '5', uncollected: '0' },
      { token: WETH, symbol: 'WETH', earned: '0.02', collected: '0.02', uncollected: '0' },
    ]);
  });

  it('divergence: a position held across a price move loses against holding; closing realises it', () => {
    const { h, s: s0, lower, upper, l } = withPosition();
    expect(lpOf(s0).divergence).toEqual({ usd: 0, realisedUsd: 0, unrealisedUsd: 0 });
    const tick = TICK_2000 + 400; // WETH up ≈ 4 % in the pool, and at the feed
    const weth = (2000 * 1.0001 ** 400).toFixed(8);
    const s1 = evolve(s0, h.mark({ tick, weth }));
    const moved = lpOf(s1).divergence;
    expect(moved.unrealisedUsd).toBeLessThan(0);
    expect(moved.realisedUsd).toBe(0);
    const a = getAmountsForLiquidity(
      getSqrtRatioAtTick(tick),
      getSqrtRatioAtTick(lower),
      getSqrtRatioAtTick(upper),
      l,
    );
    const s2 = evolve(
      s1,
      h.record('position.closed', {
        positionId: '1',
        amount0: a.amount0.toString(),
        amount1: a.amount1.toString(),
      }),
    );
    const closed = lpOf(s2).divergence;
    expect(closed.unrealisedUsd).toBe(0);
    expect(closed.realisedUsd).toBe(moved.unrealisedUsd);
  });

  it('time in range: each interval counts as the earlier block end stood, per position and for the vault', () => {
    const { h, s: s0 } = withPosition(); // opened in range at ts T
    let s = evolve(s0, h.mark()); // +12 s in range
    s = evolve(s, h.mark({ tick: TICK_2000 + 700 })); // +12 s in range (the move shows at this end)
    s = evolve(s, h.mark()); // +12 s out of range
    const v = lpOf(s);
    expect(v.timeInRange).toEqual({ share: 0.666667, inRangeMs: 24_000, openMs: 36_000 });
    const pos = snapshotView.parse(toSnapshotView(s)).positions[0]!;
    expect(pos.timeInRange).toEqual({ share: 0.666667, inRangeMs: 24_000, openMs: 36_000 });
  });

  it('drawdown of the return index: the largest fall from a peak, and the fall now', () => {
    const h = new History();
    let s = foldAll(undefined, [h.created(), h.deposit(WETH, eth(1))]);
    // The index is net of the 20 % fee accrued above the high water (2,000): at 2,200 it is
    // (2,200 − 40) / 2,000 = 1.08, a new peak.
    s = evolve(s, h.mark({ weth: '2200' }));
    s = evolve(s, h.mark({ weth: '1650' })); // 0.825: 1 − 0.825 / 1.08
    expect(lpOf(s).drawdown).toEqual({ max: 0.236111, current: 0.236111 });
    s = evolve(s, h.mark({ weth: '1980' })); // 0.99: 1 − 0.99 / 1.08
    expect(lpOf(s).drawdown).toEqual({ max: 0.236111, current: 0.083333 });
    s = evolve(s, h.mark({ weth: '2400' })); // (2,400 − 80) / 2,000 = 1.16: a new peak
    expect(lpOf(s).drawdown).toEqual({ max: 0.236111, current: 0 });
  });

  it('vs holding and PnL in token terms: a withdrawal scales the basket; held − in + out per token', () => {
    const h = new History();
    let s = foldAll(undefined, [h.created(), h.deposit(WETH, eth(1)), h.deposit(USDC, usdc(1000))]);
    s = evolve(s, h.withdrawal(USDC, usdc(600), { weth: '3000' })); // value before 4,000: keep 85 %
    const v = lpOf(s);
    expect(v.hold.valueUsd).toBe(3400); // (1 WETH + 1,000 USDC) · 0.85 at 3,000
    expect(v.hold.leadUsd).toBe(0);
    expect(v.tokens).toEqual([
      { token: USDC, symbol: 'USDC', held: '400', in: '1000', out: '600', pnl: '0' },
      { token: WETH, symbol: 'WETH', held: '1', in: '1', out: '0', pnl: '0' },
    ]);
  });

  it('the APRs wait for a day of funded block time, then annualise on time-weighted capital', () => {
    const { h, s: s0 } = withPosition();
    h.accrueFees('1', 0n, usdc(10));
    let s = evolve(s0, h.mark());
    expect(lpOf(s).tradingFees.apr).toBeNull();
    h.ts += MIN_APR_HISTORY_MS / 1000;
    s = evolve(s, h.mark());
    const lp = s.lp!;
    // 10 USD over ∫V dt, × a year: exactly the figure from the state's own integral
    const expected = Number(divRound(10n * SCALE * 365n * 86_400_000n * 10n ** 6n, lp.capitalMs)) / 1e6;
    expect(lpOf(s).tradingFees.apr).toBe(expected);
    expect(lpOf(s).tradingFees.apr).toBeGreaterThan(0);
  });

  it('a swap of the vault costs what it gave up at the feeds’ prices: the pool’s fee and the price impact', () => {
    const h = new History();
    let s = foldAll(undefined, [h.created(), h.deposit(USDC, usdc(10_000))]);
    // 2,000 USDC for 0.99 WETH at a feed price of 2,000: 20 USD given up, of which the pool's
    // 0.05 % fee (feeTier 500) is 1 USD.
    h.held.balances[USDC] = (h.held.balances[USDC] ?? 0n) - usdc(2000);
    h.held.balances[WETH] = (h.held.balances[WETH] ?? 0n) + eth(0.99);
    s = evolve(
      s,
      h.record('swap', {
        tokenIn: USDC,
        amountIn: usdc(2000).toString(),
        tokenOut: WETH,
        amountOut: eth(0.99).toString(),
      }),
    );
    expect(s.reconciled).toEqual([]); // the book follows the swap: nothing unexplained
    expect(lpOf(s).rebalances).toEqual({
      count: 0,
      swaps: 1,
      costUsd: 20,
      swapFeesUsd: 1,
      priceImpactUsd: 19,
    });
    expect(snapshotView.parse(toSnapshotView(s)).netUsd).toBe(-20);
  });

  it('per-position figures are kept in the stored object’s order (integer ids ascending, others as added) and read back equal', () => {
    const h = new History();
    let s = foldAll(undefined, [h.created(), h.deposit(WETH, eth(4)), h.deposit(USDC, usdc(8000))]);
    // 4294967296 is no array index: an object enumerates it after the integer ids, as added.
    const openedAt = new Map<string, number>();
    let a = { amount0: 0n, amount1: 0n };
    for (const positionId of ['10', '4294967296', '9', '2']) {
      ({ s, a } = open(h, s, positionId));
      openedAt.set(positionId, s.updatedAt);
      h.ts += 60;
      s = evolve(s, h.mark());
    }
    const json = JSON.parse(JSON.stringify(serializeState(s)));
    const order = ['2', '9', '10', '4294967296'];
    expect(Object.keys(json.lp.baskets)).toEqual(order);
    expect(Object.keys(json.lp.ranges)).toEqual(order);
    expect(s.lp!.baskets.map((b) => b.id)).toEqual(order);
    expect(s.lp!.ranges.map((r) => r.id)).toEqual(order);
    expect(deserializeState(json)).toEqual(s);
    // Each position's time is its own: from the block end that opened it (all in range).
    const views = new Map(toSnapshotView(s).positions.map((p) => [p.id, p.timeInRange]));
    for (const [id, at] of openedAt)
      expect(views.get(id)).toEqual({ share: 1, inRangeMs: s.updatedAt - at, openMs: s.updatedAt - at });
    expect(new Set(openedAt.values()).size).toBe(4);
    // A close drops its basket and, at the block end, its own time (the vault's stays).
    s = evolve(
      s,
      h.record('position.closed', {
        positionId: '9',
        amount0: a.amount0.toString(),
        amount1: a.amount1.toString(),
      }),
    );
    expect(s.lp!.baskets.map((b) => b.id)).toEqual(['2', '10', '4294967296']);
    expect(s.lp!.ranges.map((r) => r.id)).toEqual(['2', '10', '4294967296']);
    expect(deserializeState(JSON.parse(JSON.stringify(serializeState(s))))).toEqual(s);
  });

  it('a state folded before fold version 5 has no LP figures, and gains none by folding on', () => {
    const { h, s: s0 } = withPosition();
    const { lp: _lp, ...old } = serializeState(s0);
    const s = evolve(deserializeState(old), h.mark());
    expect(s.lp).toBeNull();
    const view = snapshotView.parse(toSnapshotView(s));
    expect(view.lp).toBeNull();
    expect(view.positions[0]!.timeInRange).toBeNull();
  });

  it('a block shared by several records: figures only at its end, the same as the records folded alone', () => {
    const a = withPosition();
    a.h.accrueFees('1', eth(0.01), 0n);
    const shared = foldAll(
      a.s,
      oneBlock([a.h.deposit(USDC, usdc(10)), a.h.withdrawal(USDC, usdc(5)), a.h.mark()]),
    );
    const b = withPosition();
    b.h.accrueFees('1', eth(0.01), 0n);
    const alone = foldAll(b.s, [b.h.deposit(USDC, usdc(10)), b.h.withdrawal(USDC, usdc(5)), b.h.mark()]);
    expect(lpOf(shared).tradingFees).toEqual(lpOf(alone).tradingFees);
    expect(lpOf(shared).tokens).toEqual(lpOf(alone).tokens);
  });
});

/** Independent figures from the records alone (never the fold's state). */
function fromRecords(rs: readonly VaultRecord[]) {
  const collected: Record<string, bigint> = {};
  const valued: Record<string, bigint> = {};
  let feesUsd = 0n;
  let openMs = 0;
  let inRangeMs = 0;
  const flowsIn: Record<string, bigint> = {};
  const flowsOut: Record<string, bigint> = {};
  let prev: VaultRecord | null = null;
  for (const r of rs) {
    if (r.type === 'fees.collected') {
      collected[WETH] = (collected[WETH] ?? 0n) + BigInt(r.payload.amount0);
      collected[USDC] = (collected[USDC] ?? 0n) + BigInt(r.payload.amount1);
    }
    if (r.type === 'deposit')
      flowsIn[r.payload.token] = (flowsIn[r.payload.token] ?? 0n) + BigInt(r.payload.amount);
    if (r.type === 'withdrawal')
      flowsOut[r.payload.token] = (flowsOut[r.payload.token] ?? 0n) + BigInt(r.payload.amount);
    const earned = { ...collected };
    for (const p of r.context.holdings.positions) {
      earned[WETH] = (earned[WETH] ?? 0n) + BigInt(p.owed0);
      earned[USDC] = (earned[USDC] ?? 0n) + BigInt(p.owed1);
    }
    for (const t of r.context.tokens) {
      const d = (earned[t.address] ?? 0n) - (valued[t.address] ?? 0n);
      if (d === 0n) continue;
      feesUsd += tokenValue(d, t.decimals, parseFixed(t.priceUsd));
      valued[t.address] = earned[t.address] ?? 0n;
    }
    if (prev) {
      const dt = (r.blockTimestamp - prev.blockTimestamp) * 1000;
      const tick = prev.context.pools[0]!.tick;
      const open = prev.context.holdings.positions.filter((p) => BigInt(p.liquidity) > 0n);
      if (open.length > 0) {
        openMs += dt;
        if (open.every((p) => isInRange(tick, p.tickLower, p.tickUpper))) inRangeMs += dt;
      }
    }
    prev = r;
  }
  return { feesUsd, openMs, inRangeMs, flowsIn, flowsOut };
}

describe('LP figures over random valid histories (property)', () => {
  it('match the records: fees at the price when earned, time in range from each block end’s tick, token flows', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        const ts = buildHistory(steps);
        const last = ts.at(-1)!.after;
        const want = fromRecords(ts.map((t) => t.record));
        const lp = last.lp!;
        expect(lp.feesUsd).toBe(want.feesUsd);
        expect(lp.openMs).toBe(want.openMs);
        expect(lp.inRangeMs).toBe(want.inRangeMs);
        // in: deposits + balance increases no event explains; out: withdrawals
        const reconciledIn: Record<string, bigint> = {};
        for (const t of ts)
          for (const x of t.after.reconciled)
            if (x.amount > 0n) reconciledIn[x.token] = (reconciledIn[x.token] ?? 0n) + x.amount;
        for (const token of new Set([...Object.keys(want.flowsIn), ...Object.keys(reconciledIn)]))
          expect(lp.flowsIn[token as typeof WETH] ?? 0n).toBe(
            (want.flowsIn[token] ?? 0n) + (reconciledIn[token] ?? 0n),
          );
        for (const token of Object.keys(want.flowsOut))
          expect(lp.flowsOut[token as typeof WETH] ?? 0n).toBe(want.flowsOut[token]);
      }),
      runs,
    );
  });

  it('drawdown is the return index’s largest fall from a previous block-end peak', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        let peak = SCALE;
        let max = 0n;
        for (const { after } of buildHistory(steps)) {
          const x = after.returnIndex;
          if (x > peak) peak = x;
          else if (divRound((peak - x) * SCALE, peak) > max) max = divRound((peak - x) * SCALE, peak);
          expect(after.lp!.peakIndex).toBe(peak);
          expect(after.lp!.maxDrawdown).toBe(max);
        }
      }),
      runs,
    );
  });

  it('the attribution adds up to netUsd exactly, divergence to its parts, PnL per token to held − in + out', () => {
    fc.assert(
      fc.property(stepsArb, (steps) => {
        for (const { after } of buildHistory(steps)) {
          const view = snapshotView.parse(toSnapshotView(after));
          const lp = view.lp!;
          const a = lp.attribution;
          const micros = (x: number) => Math.round(x * 1e6);
          expect(
            micros(a.tradingFeesUsd) +
              micros(a.rewardsUsd) +
              micros(a.performanceFeesUsd) +
              micros(a.lossesUsd) +
              micros(a.priceUsd),
          ).toBe(micros(view.netUsd));
          expect(micros(lp.divergence.usd)).toBe(
            micros(lp.divergence.realisedUsd) + micros(lp.divergence.unrealisedUsd),
          );
          expect(micros(lp.hold.leadUsd)).toBe(micros(view.valueUsd) - micros(lp.hold.valueUsd));
          for (const t of lp.tokens) {
            const [h, i, o, p] = [t.held, t.in, t.out, t.pnl].map((x) => parseFixed(x));
            expect(p).toBe(h! - i! + o!);
          }
          expect(toMicros(after.lp!.feesUsd)).toBe(BigInt(micros(a.tradingFeesUsd)));
        }
      }),
      runs,
    );
  });

  it('are the same when the fold is cut anywhere (states reloaded from their JSON form)', () => {
    fc.assert(
      fc.property(stepsArb, fc.nat(), (steps, seed) => {
        const ts = buildHistory(steps);
        let s: VaultState = createVaultState(ts[0]!.record);
        ts.slice(1).forEach((t, i) => {
          if ((seed >> (i % 30)) & 1) s = deserializeState(JSON.parse(JSON.stringify(serializeState(s))));
          s = evolve(s, t.record);
        });
        expect(toLpView(s)).toEqual(toLpView(ts.at(-1)!.after));
      }),
      runs,
    );
  });
});
