/**
 * A flow of a token that never had a valid price (its feed answered 0 at every block read so far)
 * is valued at the token's first valid price, never at 0 (issue #43 item 1): before, a deposit of
 * 1 WETH made while the feed answered 0 was capital in 0, and the price's arrival booked the whole
 * principal as a gain (net +2,000, market delta +2,000, a fee due of 400 on it).
 */

import { eth, History, OTHER, oneBlock, USDC, usdc, WETH } from '@vault-yield/test-kit/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ledgerAmounts } from '../mapping/amounts.js';
import { toEquityPoint, toSnapshotView } from '../mapping/snapshot.js';
import { parseFixed, SCALE } from '../math/fixed.js';
import type { VaultRecord } from '../records/envelope.js';
import { snapshotView } from '../views/index.js';
import { foldRecord } from './evolve.js';
import { performanceFeeDueUsd } from './fees.js';
import { deserializeState, serializeState } from './serialize.js';
import { netUsd, type VaultState } from './state.js';

const usd = (x: string) => parseFixed(x);
const foldAll = (s: VaultState | undefined, rs: readonly VaultRecord[]): VaultState =>
  rs.reduce<VaultState | undefined>((acc, r) => foldRecord(acc, r), s)!;

/** A vault created while the WETH feed answers 0, 1 WETH deposited then. */
function depositedUnpriced(): { h: History; s: VaultState; deposit: VaultRecord } {
  const h = new History();
  h.market = { ...h.market, weth: '0' };
  const created = h.created();
  const deposit = h.deposit(WETH, eth(1));
  return { h, s: foldAll(undefined, [created, deposit]), deposit };
}

describe('a flow before its token ever had a valid price (#43 item 1)', () => {
  it('the issue: 1 WETH deposited at feed 0, then 2,000 — net 0, capital in 2,000, high water 2,000, no fee due', () => {
    const { h, s: waiting, deposit } = depositedUnpriced();
    // Until the price comes: in no USD figure, flagged, the ledger row's USD null (never 0).
    expect(waiting.capitalInUsd).toBe(0n);
    expect(waiting.highWaterUsd).toBe(0n);
    expect(waiting.benchmark).toEqual({});
    const shown = toSnapshotView(waiting);
    expect(shown.unpricedFlows).toEqual([
      { token: WETH, symbol: 'WETH', flow: 'deposit', amount: '1', blockNumber: deposit.blockNumber },
    ]);
    expect(shown.stalePrices).toEqual([expect.objectContaining({ token: WETH, reason: 'invalid' })]);
    expect(ledgerAmounts(deposit, waiting)).toEqual([
      { field: 'amount', token: WETH, symbol: 'WETH', amount: '1', valueUsd: null },
    ]);

    // The feed answers 2,000; ETH has not moved.
    const s = foldAll(waiting, [h.mark({ weth: '2000' })]);
    expect(s.valueUsd).toBe(usd('2000'));
    expect(s.capitalInUsd).toBe(usd('2000'));
    expect(netUsd(s)).toBe(0n);
    expect(s.marketDeltaUsd).toBe(0n);
    expect(s.highWaterUsd).toBe(usd('2000'));
    expect(performanceFeeDueUsd(s, 2000)).toBe(0n);
    expect(s.benchmark).toEqual({ [WETH]: eth(1) * SCALE });
    expect(s.returnIndex).toBe(SCALE);
    expect(s.unpriced).toEqual([]);
    const view = toSnapshotView(s);
    expect(view).toMatchObject({ netUsd: 0, marketDeltaUsd: 0, capitalInUsd: 2000, unpricedFlows: [] });
    expect(view.fees).toMatchObject({ contributedUsd: 2000, highWaterUsd: 2000 });
    // The chart's gain net of flows is 0 at the point of the price's block.
    const point = toEquityPoint(s);
    expect(point.valueUsd - point.capitalInUsd + point.capitalOutUsd).toBe(0);
    // ETH then moves: the basket took the deposit at the first price, a move is market delta.
    const moved = foldAll(s, [h.mark({ weth: '2100' })]);
    expect(moved.marketDeltaUsd).toBe(usd('100'));
  });

  it('deposit and part withdrawn while unpriced, beside a priced balance: booked in order at the first price', () => {
    const h = new History();
    h.market = { ...h.market, weth: '0' };
    let s = foldAll(undefined, [h.created(), h.deposit(USDC, usdc(1000)), h.deposit(WETH, eth(1))]);
    s = foldAll(s, [h.withdrawal(WETH, eth(0.5))]);
    expect(s.capitalInUsd).toBe(usd('1000'));
    expect(s.capitalOutUsd).toBe(0n);
    expect(s.unpriced.map((f) => [f.source, f.raw])).toEqual([
      ['deposit', eth(1)],
      ['withdrawal', eth(0.5)],
    ]);
    // A state with waiting flows survives the projector's jsonb column.
    expect(deserializeState(JSON.parse(JSON.stringify(serializeState(s))))).toEqual(s);
    s = foldAll(s, [h.mark({ weth: '2000' })]);
    expect(s.capitalInUsd).toBe(usd('3000'));
    expect(s.capitalOutUsd).toBe(usd('1000'));
    expect(s.valueUsd).toBe(usd('2000'));
    expect(netUsd(s)).toBe(0n);
    expect(s.marketDeltaUsd).toBe(0n);
    // 1,000 + 2,000 in, then 1,000 out of 3,000: two thirds of 3,000.
    expect(s.highWaterUsd).toBe(usd('2000'));
    expect(s.returnIndex).toBe(SCALE);
  });

  it('a fee charged in a token without a price yet is taxed at its first price', () => {
    const { h, s: waiting } = depositedUnpriced();
    const charged = h.record('fee.charged', { token: WETH, amount: eth(0.01).toString(), recipient: OTHER });
    let s = foldAll(waiting, [charged]);
    expect(s.taxedUsd).toBe(0n);
    expect(ledgerAmounts(charged, s)[0]?.valueUsd).toBeNull();
    s = foldAll(s, [h.mark({ weth: '2000' })]);
    expect(s.taxedUsd).toBe(usd('20'));
    expect(s.capitalInUsd).toBe(usd('2000'));
    expect(netUsd(s)).toBe(usd('-20'));
  });

  it('the first price in a block with the vault’s own flows: the same figures as in blocks of their own', () => {
    const cut = depositedUnpriced();
    const alone = depositedUnpriced();
    const one = foldAll(cut.s, oneBlock([cut.h.mark({ weth: '2000' }), cut.h.deposit(USDC, usdc(500))]));
    const two = foldAll(alone.s, [alone.h.mark({ weth: '2000' }), alone.h.deposit(USDC, usdc(500))]);
    for (const k of ['capitalInUsd', 'highWaterUsd', 'marketDeltaUsd', 'returnIndex', 'valueUsd'] as const)
      expect(one[k]).toBe(two[k]);
    expect(one.benchmark).toEqual(two.benchmark);
  });

  it('tokens sent before any price (no event) are reconciled at the first price as capital in, not a gain', () => {
    const h = new History();
    h.market = { ...h.market, weth: '0' };
    let s = foldAll(undefined, [h.created()]);
    h.transfer(WETH, eth(2));
    s = foldAll(s, [h.mark()]);
    expect(s.reconciled).toEqual([{ token: WETH, amount: eth(2), valueUsd: null }]);
    expect(s.unpriced.map((f) => f.source)).toEqual(['unexplainedIn']);
    s = foldAll(s, [h.mark({ weth: '1500' })]);
    expect(s.capitalInUsd).toBe(usd('3000'));
    expect(netUsd(s)).toBe(0n);
    expect(s.marketDeltaUsd).toBe(0n);
  });

  it('property: whenever the feed starts at 0, nothing deposited reads as a gain at the first price', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 10_000 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.boolean(),
        (deposits, price, sameBlock) => {
          const h = new History();
          h.market = { ...h.market, weth: '0' };
          let s = foldAll(undefined, [h.created()]);
          for (const d of deposits) s = foldAll(s, [h.deposit(WETH, eth(d / 1000))]);
          const first = h.mark({ weth: String(price) });
          s = foldAll(s, sameBlock ? oneBlock([first, h.deposit(USDC, usdc(10))]) : [first]);
          expect(netUsd(s)).toBe(0n);
          expect(s.marketDeltaUsd).toBe(0n);
          expect(s.returnIndex).toBe(SCALE);
          expect(s.highWaterUsd).toBe(s.capitalInUsd);
          expect(snapshotView.parse(toSnapshotView(s)).unpricedFlows).toEqual([]);
        },
      ),
      { numRuns: 60 },
    );
  });
});
