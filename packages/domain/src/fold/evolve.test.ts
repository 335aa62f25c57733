import { ARB, eth, History, OTHER, POOL, TICK_2000, USDC, usdc, WETH } from '@vault-yield/test-kit/domain';
import { describe, expect, it } from 'vitest';
import { divRound, parseFixed } from '../math/fixed.js';
import { getAmountsForLiquidity, getLiquidityForAmounts } from '../math/liquidity-amounts.js';
import { getSqrtRatioAtTick } from '../math/tick-math.js';
import { FoldError, type FoldErrorReason } from './errors.js';
import { createVaultState, evolve, foldRecord } from './evolve.js';
import { netUsd, strategyDeltaUsd, type VaultState } from './state.js';
import { computeValueUsd } from './valuation.js';

const usd = parseFixed;

function funded(h = new History()) {
  let s = createVaultState(h.created());
  s = evolve(s, h.deposit(WETH, eth(1)));
  s = evolve(s, h.deposit(USDC, usdc(2000)));
  return { h, s };
}

function expectRefused(f: () => unknown, reason: FoldErrorReason) {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(FoldError);
    expect((e as FoldError).reason).toBe(reason);
    return;
  }
  throw new Error(`expected FoldError ${reason}`);
}

/** Opens a position using all that `s` can fund within ±width ticks of the current tick. */
function openAll(h: History, s: VaultState, id: string, lower: number, upper: number) {
  const sp = getSqrtRatioAtTick(h.market.tick);
  const [sa, sb] = [getSqrtRatioAtTick(lower), getSqrtRatioAtTick(upper)];
  const l = getLiquidityForAmounts(sp, sa, sb, s.idle[WETH] ?? 0n, s.idle[USDC] ?? 0n);
  const a = getAmountsForLiquidity(sp, sa, sb, l);
  return h.record('position.opened', {
    positionId: id,
    pool: POOL,
    tickLower: lower,
    tickUpper: upper,
    liquidity: l.toString(),
    amount0: a.amount0.toString(),
    amount1: a.amount1.toString(),
  });
}

describe('createVaultState', () => {
  it('starts empty from vault.created', () => {
    const h = new History();
    const s = createVaultState(h.created());
    expect(s.vault).toBe(`0x${'aa'.repeat(20)}`);
    expect(s.strategy).toBe('wide-eth');
    expect(s.valueUsd).toBe(0n);
    expect(s.tokens[WETH]?.price).toBe(usd('2000'));
    expect(s.pools[POOL]?.tick).toBe(TICK_2000);
    expect(s.updatedAt).toBe(h.ts * 1000);
  });

  it('refuses any other first record', () => {
    expectRefused(() => createVaultState(new History().deposit(WETH, 1n)), 'not-created');
    expectRefused(() => foldRecord(undefined, new History().mark()), 'not-created');
  });
});

describe('evolve: flows', () => {
  it('deposit adds to idle, capital in, benchmark and high-water mark', () => {
    const { s } = funded();
    expect(s.idle[WETH]).toBe(eth(1));
    expect(s.idle[USDC]).toBe(usdc(2000));
    expect(s.capitalInUsd).toBe(usd('4000'));
    expect(s.valueUsd).toBe(usd('4000'));
    expect(s.highWaterUsd).toBe(usd('4000'));
    expect(s.benchmark[WETH]).toBe(eth(1) * 10n ** 18n);
    expect(netUsd(s)).toBe(0n);
  });

  it('withdrawal removes idle, adds capital out and scales basket and mark by (1 − W/V)', () => {
    const { h, s } = funded();
    const t = evolve(s, h.withdrawal(USDC, usdc(1000)));
    expect(t.idle[USDC]).toBe(usdc(1000));
    expect(t.capitalOutUsd).toBe(usd('1000'));
    expect(t.highWaterUsd).toBe(usd('3000'));
    expect(t.benchmark[WETH]).toBe((eth(1) * 10n ** 18n * 3n) / 4n);
    expect(netUsd(t)).toBe(0n);
  });

  it('a full withdrawal drops the zero balance', () => {
    const { h, s } = funded();
    const t = evolve(s, h.withdrawal(USDC, usdc(2000)));
    expect(USDC in t.idle).toBe(false);
  });

  it('revalues only when a price, a pool or a holding moved, and then from the new holdings', () => {
    const { h, s } = funded();
    // Same context again (a vault's later record in its block): value kept (the maps are shared:
    // 'shares the maps a record does not touch').
    const same = evolve(s, h.mark());
    expect(same.valueUsd).toBe(s.valueUsd);
    expect(same.valueUsd).toBe(computeValueUsd(same));
    // A state whose valueUsd disagrees with its maps shows which path ran: kept when nothing moved…
    const tagged = { ...same, valueUsd: 1n };
    expect(evolve(tagged, h.mark()).valueUsd).toBe(1n);
    // …recomputed when a price moved, or when a balance did (a transfer, prices unchanged).
    const repriced = evolve(tagged, h.mark({ weth: '2100' }));
    expect(repriced.valueUsd).toBe(usd('4100'));
    h.transfer(USDC, usdc(100));
    const sent = evolve({ ...repriced, valueUsd: 1n }, h.mark());
    expect(sent.tokens).toBe(repriced.tokens);
    expect(sent.valueUsd).toBe(usd('4200'));
    expect(sent.valueUsd).toBe(computeValueUsd(sent));
  });

  it('prices move market delta by the basket; the split adds up to net', () => {
    const { h, s } = funded();
    const t = evolve(s, h.mark({ weth: '2100' }));
    expect(t.valueUsd).toBe(usd('4100'));
    expect(t.marketDeltaUsd).toBe(usd('100'));
    expect(strategyDeltaUsd(t)).toBe(0n);
    // withdraw half at 2100: basket halves, later moves count half
    const u = evolve(t, h.withdrawal(WETH, eth(1)));
    const v = evolve(u, h.mark({ weth: '2200' }));
    const scaled = (4100n - 2100n) * 10n ** 18n;
    expect(u.benchmark[WETH]).toBe(divRound(eth(1) * 10n ** 18n * scaled, usd('4100')));
    expect(v.marketDeltaUsd - u.marketDeltaUsd).toBe(divRound(u.benchmark[WETH]! * usd('100'), 10n ** 36n));
    expect(strategyDeltaUsd(v) + v.marketDeltaUsd).toBe(netUsd(v));
  });

  it('fee.charged pays from idle, adds to taxed, resets the mark to the post-fee value', () => {
    const { h, s } = funded();
    const up = evolve(s, h.mark({ weth: '3000' }));
    const t = evolve(
      up,
      h.record('fee.charged', { token: USDC, amount: usdc(200).toString(), recipient: OTHER }),
    );
    expect(t.idle[USDC]).toBe(usdc(1800));
    expect(t.taxedUsd).toBe(usd('200'));
    expect(t.highWaterUsd).toBe(usd('4800'));
    expect(t.marketDeltaUsd).toBe(usd('1000'));
    expect(strategyDeltaUsd(t)).toBe(usd('-200'));
  });

  it('rewards accrue to pending and move to idle when claimed', () => {
    const { h, s } = funded();
    const a = evolve(s, h.record('rewards.accrued', { rewardToken: ARB, amount: eth(10).toString() }));
    expect(a.pendingRewards[ARB]).toBe(eth(10));
    expect(a.valueUsd).toBe(usd('4005'));
    const c = evolve(a, h.record('rewards.claimed', { rewardToken: ARB, amount: eth(4).toString() }));
    expect(c.pendingRewards[ARB]).toBe(eth(6));
    expect(c.idle[ARB]).toBe(eth(4));
    expect(c.valueUsd).toBe(usd('4005'));
    expect(strategyDeltaUsd(c)).toBe(usd('5'));
  });
});

describe('evolve: positions', () => {
  it('opening moves idle into the position; value = idle + LiquidityAmounts', () => {
    const { h, s } = funded();
    const rec = openAll(h, s, '7', TICK_2000 - 600, TICK_2000 + 600);
    const t = evolve(s, rec);
    expect(t.positions['7']?.liquidity).toBe(BigInt(rec.payload.liquidity));
    expect(t.idle[WETH] ?? 0n).toBe(eth(1) - BigInt(rec.payload.amount0));
    expect(t.idle[USDC] ?? 0n).toBe(usdc(2000) - BigInt(rec.payload.amount1));
    expect(t.valueUsd).toBe(computeValueUsd(t));
    // value within a cent of the deposit (floor rounding of LiquidityAmounts)
    expect(usd('4000') - t.valueUsd).toBeGreaterThanOrEqual(0n);
    expect(usd('4000') - t.valueUsd).toBeLessThan(usd('0.01'));
  });

  it('resize sets liquidity and moves signed deltas', () => {
    const { h, s } = funded();
    const t = evolve(s, openAll(h, s, '1', TICK_2000 - 600, TICK_2000 + 600));
    const idle0 = t.idle[WETH] ?? 0n;
    const r = evolve(
      t,
      h.record('position.resized', {
        positionId: '1',
        liquidity: '5',
        amount0Delta: '-1000',
        amount1Delta: '0',
      }),
    );
    expect(r.positions['1']?.liquidity).toBe(5n);
    expect(r.idle[WETH]).toBe(idle0 + 1000n);
  });

  it('rebalance replaces ticks and liquidity; idle += Out − In', () => {
    const { h, s } = funded();
    const t = evolve(s, openAll(h, s, '1', TICK_2000 - 600, TICK_2000 + 600));
    const r = evolve(
      t,
      h.record('position.rebalanced', {
        positionId: '1',
        tickLower: TICK_2000 - 60,
        tickUpper: TICK_2000 + 60,
        liquidity: '123',
        amount0Out: '500',
        amount1Out: '70',
        amount0In: '200',
        amount1In: '70',
      }),
    );
    expect(r.positions['1']).toMatchObject({
      tickLower: TICK_2000 - 60,
      tickUpper: TICK_2000 + 60,
      liquidity: 123n,
    });
    expect(r.positions['1']?.sqrtLower).toBe(getSqrtRatioAtTick(TICK_2000 - 60));
    expect((r.idle[WETH] ?? 0n) - (t.idle[WETH] ?? 0n)).toBe(300n);
    expect(r.idle[USDC]).toBe(t.idle[USDC]);
  });

  it('fees.collected adds to idle; close returns amounts and removes the position', () => {
    const { h, s } = funded();
    const t = evolve(s, openAll(h, s, '1', TICK_2000 - 600, TICK_2000 + 600));
    const f = evolve(
      t,
      h.record('fees.collected', { positionId: '1', amount0: '0', amount1: usdc(3).toString() }),
    );
    expect((f.idle[USDC] ?? 0n) - (t.idle[USDC] ?? 0n)).toBe(usdc(3));
    expect(strategyDeltaUsd(f) - strategyDeltaUsd(t)).toBe(usd('3'));
    const c = evolve(f, h.record('position.closed', { positionId: '1', amount0: '10', amount1: '20' }));
    expect(c.positions['1']).toBeUndefined();
    expect((c.idle[WETH] ?? 0n) - (f.idle[WETH] ?? 0n)).toBe(10n);
  });
});

describe('evolve: purity and sharing', () => {
  it('never modifies the input state, also when refusing or reconciling', () => {
    const { h, s } = funded();
    const before = JSON.stringify(s, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
    evolve(s, h.mark({ weth: '1' }));
    expectRefused(() => evolve(s, { ...h.mark(), blockNumber: 1 }), 'out-of-order');
    h.transfer(USDC, usdc(5));
    expect(evolve(s, h.withdrawal(WETH, eth(1))).reconciled).toHaveLength(1);
    expect(JSON.stringify(s, (_, v) => (typeof v === 'bigint' ? v.toString() : v))).toBe(before);
  });

  it('shares the maps a record does not touch', () => {
    const { h, s } = funded();
    const t = evolve(s, h.mark());
    expect(t.tokens).toBe(s.tokens);
    expect(t.pools).toBe(s.pools);
    expect(t.idle).toBe(s.idle);
    expect(t.positions).toBe(s.positions);
    const u = evolve(t, h.deposit(USDC, 1n));
    expect(u.positions).toBe(t.positions);
    expect(u.pendingRewards).toBe(t.pendingRewards);
  });
});

describe('evolve: refusals (FoldError)', () => {
  const { h, s } = funded();

  it('vault.created twice', () => expectRefused(() => evolve(s, new History().created()), 'already-created'));

  it('revert records', () =>
    expectRefused(
      () => evolve(s, h.record('revert', { fromBlock: 1, orphanedBlockHashes: [`0x${'1'.repeat(64)}`] })),
      'revert-not-folded',
    ));

  it('a record for another vault or chain', () => {
    expectRefused(() => evolve(s, { ...h.mark(), vault: OTHER }), 'wrong-vault');
    expectRefused(() => evolve(s, { ...h.mark(), chainId: 1 }), 'wrong-vault');
  });

  it('an older block', () => expectRefused(() => evolve(s, { ...h.mark(), blockNumber: 1 }), 'out-of-order'));

  it('a token not in the context', () => {
    const r = h.deposit(WETH, 1n);
    expectRefused(() => evolve(s, { ...r, payload: { ...r.payload, token: OTHER } }), 'unknown-token');
  });

  it('changed decimals', () => {
    const r = h.mark();
    const tokens = r.context.tokens.map((t) => (t.address === USDC ? { ...t, decimals: 18 } : t));
    expectRefused(() => evolve(s, { ...r, context: { ...r.context, tokens } }), 'decimals-changed');
  });

  it('a pool price outside TickMath bounds', () => {
    const r = h.mark();
    const pools = r.context.pools.map((p) => ({ ...p, sqrtPriceX96: '0' }));
    expectRefused(() => evolve(s, { ...r, context: { ...r.context, pools } }), 'invalid-pool-price');
  });
});

describe('evolve: total over what the chain accepted (reconciled with the holdings)', () => {
  it('a plain transfer straight to the vault is capital in at its next record; net does not move', () => {
    const { h, s } = funded();
    h.transfer(USDC, usdc(5));
    const t = evolve(s, h.mark());
    expect(t.idle[USDC]).toBe(usdc(2005));
    expect(t.valueUsd).toBe(usd('4005'));
    expect(t.capitalInUsd).toBe(usd('4005'));
    expect(t.reconciled).toEqual([{ token: USDC, amount: usdc(5), valueUsd: usd('5') }]);
    expect(netUsd(t)).toBe(0n);
    expect(t.book).toEqual(t.idle);
    // the owner then withdraws the whole balance: applied, capital out is what the chain moved
    const u = evolve(t, h.withdrawal(USDC, usdc(2005)));
    expect(USDC in u.idle).toBe(false);
    expect(u.capitalOutUsd).toBe(usd('2005'));
    expect(u.reconciled).toEqual([]);
    expect(netUsd(u)).toBe(0n);
  });

  it('a withdrawal of more than the events explain is applied, the difference booked in the same record', () => {
    const { h, s } = funded();
    h.transfer(USDC, usdc(5));
    const t = evolve(s, h.withdrawal(USDC, usdc(2005)));
    expect(t.capitalOutUsd).toBe(usd('2005'));
    expect(t.capitalInUsd).toBe(usd('4005'));
    expect(t.reconciled).toEqual([{ token: USDC, amount: usdc(5), valueUsd: usd('5') }]);
    expect(t.valueUsd).toBe(usd('2000'));
    expect(netUsd(t)).toBe(0n);
    expect(strategyDeltaUsd(t) + t.marketDeltaUsd).toBe(netUsd(t));
  });

  it('tokens gone without an event are a loss, not capital out (netUsd drops by it)', () => {
    const { h, s } = funded();
    h.transfer(WETH, -eth(0.5));
    const t = evolve(s, h.mark());
    expect(t.reconciled).toEqual([{ token: WETH, amount: -eth(0.5), valueUsd: usd('1000') }]);
    expect(t.capitalOutUsd).toBe(0n);
    expect(t.lostUsd).toBe(usd('1000'));
    expect(netUsd(t)).toBe(usd('-1000'));
  });

  it('a record that is not the last of its block does not reconcile (the holdings are end-of-block)', () => {
    const { h, s } = funded();
    h.transfer(USDC, usdc(5));
    const r = h.mark();
    const t = evolve(s, { ...r, lastInBlock: false });
    expect(t.reconciled).toEqual([]);
    expect(t.capitalInUsd).toBe(usd('4000'));
    expect(t.valueUsd).toBe(usd('4005'));
    expect(evolve(t, { ...r, logIndex: 1 }).reconciled).toHaveLength(1);
  });

  it('uncollected fees are valued as they accrue; after a close they stay owed, then go to idle', () => {
    const { h, s } = funded();
    const open = openAll(h, s, '1', TICK_2000 - 600, TICK_2000 + 600);
    const a = evolve(s, open);
    h.accrueFees('1', eth(0.01), usdc(20));
    const b = evolve(a, h.mark());
    expect(b.valueUsd - a.valueUsd).toBe(usd('40'));
    expect(strategyDeltaUsd(b) - strategyDeltaUsd(a)).toBe(usd('40'));
    const close = h.record('position.closed', {
      positionId: '1',
      amount0: open.payload.amount0,
      amount1: open.payload.amount1,
    });
    const c = evolve(b, close);
    expect(c.positions['1']?.liquidity).toBe(0n);
    expect(c.positions['1']?.owed1).toBe(usdc(20));
    expect(c.valueUsd).toBe(b.valueUsd);
    const d = evolve(
      c,
      h.record('fees.collected', {
        positionId: '1',
        amount0: eth(0.01).toString(),
        amount1: usdc(20).toString(),
      }),
    );
    expect(d.positions['1']).toBeUndefined();
    expect(d.reconciled).toEqual([]);
    expect(d.valueUsd).toBe(b.valueUsd);
    expect(netUsd(d)).toBe(usd('40'));
  });

  it('lifecycle records are applied as the chain emitted them', () => {
    const { h, s } = funded();
    expect(evolve(s, h.record('resumed', {})).suspension).toBeNull();
    const a = evolve(s, h.record('suspended', { reason: 'oracle' }));
    const b = evolve(a, h.record('suspended', { reason: 'again' }));
    expect(b.suspension).toEqual({ reason: 'again', since: a.suspension!.since });
    expect(evolve(s, h.record('exit.completed', {})).exitRequested).toBe(false);
    const c = evolve(s, h.record('exit.requested', {}));
    expect(evolve(c, h.record('exit.requested', {})).exitRequested).toBe(true);
  });

  it('rewards are what the chain says is pending; a claim moves them to idle', () => {
    const { h, s } = funded();
    const a = evolve(s, h.record('rewards.accrued', { rewardToken: ARB, amount: eth(10).toString() }));
    expect(a.pendingRewards[ARB]).toBe(eth(10));
    const b = evolve(a, h.record('rewards.claimed', { rewardToken: ARB, amount: eth(4).toString() }));
    expect(b.pendingRewards[ARB]).toBe(eth(6));
    expect(b.idle[ARB]).toBe(eth(4));
    expect(b.reconciled).toEqual([]);
    expect(b.valueUsd).toBe(a.valueUsd);
  });

  it('strategy.selected switches the strategy', () => {
    const { h, s } = funded();
    expect(evolve(s, h.record('strategy.selected', { strategy: 'tight-eth' })).strategy).toBe('tight-eth');
  });
});
