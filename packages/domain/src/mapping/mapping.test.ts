import { ARB, eth, History, OTHER, POOL, TICK_2000, USDC, usdc, WETH } from '@vault-yield/test-kit/domain';
import { describe, expect, it } from 'vitest';
import { createVaultState, evolve } from '../fold/evolve.js';
import { positionValueUsd } from '../fold/valuation.js';
import { getLiquidityForAmount0 } from '../math/liquidity-amounts.js';
import { tickToPrice } from '../math/price.js';
import { getSqrtRatioAtTick } from '../math/tick-math.js';
import { equityPointView, snapshotView } from '../views/index.js';
import { attribute, toPositionViews } from './positions.js';
import { toEquityPoint, toSnapshotView } from './snapshot.js';

function open(h: History, id: string, lower: number, upper: number, amount0: bigint) {
  const l = getLiquidityForAmount0(getSqrtRatioAtTick(lower), getSqrtRatioAtTick(upper), amount0);
  return h.record('position.opened', {
    positionId: id,
    pool: POOL,
    tickLower: lower,
    tickUpper: upper,
    liquidity: l.toString(),
    amount0: amount0.toString(),
    amount1: '0',
  });
}

function scenario() {
  const h = new History();
  let s = createVaultState(h.created());
  s = evolve(s, h.deposit(WETH, eth(2)));
  s = evolve(s, h.deposit(USDC, usdc(1000)));
  s = evolve(s, open(h, '10', TICK_2000 - 600, TICK_2000 + 600, eth(0.5)));
  s = evolve(s, open(h, '9', TICK_2000 + 1000, TICK_2000 + 2000, eth(0.25)));
  s = evolve(s, h.record('rewards.accrued', { rewardToken: ARB, amount: eth(3).toString() }, { arb: '0.7' }));
  s = evolve(s, h.mark({ weth: '2100.5' }));
  s = evolve(s, h.record('fee.charged', { token: USDC, amount: usdc(10).toString(), recipient: OTHER }));
  return { h, s };
}

describe('toSnapshotView', () => {
  it('produces a valid seed snapshot whose rules hold on the rounded figures', () => {
    const { h, s } = scenario();
    const v = snapshotView.parse(toSnapshotView(s));
    expect(v.vault).toBe(s.vault);
    expect(v.status).toBe('attention');
    expect(v.updatedAt).toBe(h.ts * 1000);
    expect(v.capitalInUsd).toBe(5000);
    expect(v.netUsd).toBeCloseTo(v.valueUsd + v.capitalOutUsd - v.capitalInUsd, 9);
    expect(v.strategyDeltaUsd + v.marketDeltaUsd).toBeCloseTo(v.netUsd, 9);
    expect(v.marketDeltaUsd).toBe(201); // 2 WETH · 100.5
    expect(v.fees).toEqual({
      contributedUsd: 5000,
      withdrawnUsd: 0,
      taxedUsd: 10,
      highWaterUsd: 5040, // 5000 + the gain the 10 USD charge settled (10 / 20 %) − 10
      receivedUsd: 0,
      unexplainedInUsd: 0,
      unexplainedOutUsd: 0,
    });
    expect(v.suspension).toBeNull();
  });

  it("begins with the vault's id and chain, then its address, as migration 0028 rewrites stored snapshots", () => {
    const { s } = scenario();
    const v = toSnapshotView(s);
    expect(Object.keys(v).slice(0, 3)).toEqual(['id', 'chainId', 'vault']);
    expect(v.id).toBe(`eip155:${s.chainId}:${s.vault}`);
    expect(v.chainId).toBe(s.chainId);
    // The text 0028 makes of an older row: '{"id":"eip155:' || chain_id || ':' || vault || '","chainId":' || chain_id || ',' || rest.
    const { id: _id, chainId: _chain, ...older } = v;
    const migrated = `{"id":"eip155:${s.chainId}:${s.vault}","chainId":${s.chainId},${JSON.stringify(older).slice(1)}`;
    expect(JSON.stringify(v)).toBe(migrated);
    expect(snapshotView.parse(v).id).toBe(v.id);
  });

  it('carries the suspension with exitsAvailable: true', () => {
    const { h, s } = scenario();
    const t = evolve(s, h.record('suspended', { reason: 'oracle stale' }));
    const v = snapshotView.parse(toSnapshotView(t));
    expect(v.status).toBe('suspended');
    expect(v.suspension).toEqual({ reason: 'oracle stale', exitsAvailable: true, since: h.ts * 1000 });
  });
});

describe('toPositionViews', () => {
  it('orders by id, names the pool, gives human prices and range status', () => {
    const { s } = scenario();
    const [a, b] = toPositionViews(s);
    expect(a?.id).toBe('9');
    expect(b?.id).toBe('10');
    expect(b?.pool).toEqual({ a: 'WETH', b: 'USDC', venue: 'uniswap-v3', feeTier: 500 });
    const p0 = tickToPrice(TICK_2000, 18, 6);
    expect(p0).toBeCloseTo(2000, 0);
    expect(b?.range.current).toBeCloseTo(p0, 6);
    expect(b?.range.lower).toBeCloseTo(p0 * 1.0001 ** -600, 6);
    expect(b?.range.upper).toBeCloseTo(p0 * 1.0001 ** 600, 6);
    expect(b?.inRange).toBe(true);
    expect(a?.inRange).toBe(false);
  });

  it('attributes pending rewards pro rata by value, summing to the vault pending value once', () => {
    const { s } = scenario();
    const views = toPositionViews(s);
    const total = views.reduce((x, p) => x + p.pendingRewardsUsd, 0);
    expect(total).toBeCloseTo(3 * 0.7, 9);
    const w9 = Number(positionValueUsd(s, s.positions['9']!));
    const w10 = Number(positionValueUsd(s, s.positions['10']!));
    expect(views[0]!.pendingRewardsUsd).toBeCloseTo((2.1 * w9) / (w9 + w10), 5);
    expect(views[1]!.pendingRewardsUsd).toBeCloseTo((2.1 * w10) / (w9 + w10), 5);
  });

  it('attribute splits evenly when no position has value, remainder to the last', () => {
    expect(attribute(10n, [0n, 0n, 0n])).toEqual([3n, 3n, 4n]);
    expect(attribute(10n, [1n, 3n])).toEqual([2n, 8n]);
    expect(attribute(0n, [5n])).toEqual([0n]);
  });
});

describe('toEquityPoint', () => {
  it('is the value and flows at the block time', () => {
    const { h, s } = scenario();
    const t = evolve(s, h.withdrawal(USDC, usdc(100)));
    const p = equityPointView.parse(toEquityPoint(t));
    expect(p).toEqual({
      ts: h.ts * 1000,
      blockNumber: h.block,
      valueUsd: toSnapshotView(t).valueUsd,
      capitalInUsd: 5000,
      capitalOutUsd: 100,
      // the benchmark basket (2 WETH + 1,000 USDC) at WETH 2,100.5 is 5,201, scaled by the
      // withdrawal of 100 from the 5,152.609967 just before it
      holdValueUsd: Math.round(((5201 * 5052.609967) / 5152.609967) * 1e6) / 1e6,
    });
  });
});
