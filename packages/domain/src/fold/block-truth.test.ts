/**
 * Figures over time are functions of the log alone: a fee settles at its own place in its block,
 * a snapshot never shows a block half folded, a block whose last record was lost still ends, a
 * feed's non-answer is no price, and every price a figure used is flagged when stale.
 */

import {
  eth,
  History,
  OTHER,
  oneBlock,
  POOL,
  TICK_2000,
  USDC,
  usdc,
  WETH,
} from '@vault-yield/test-kit/domain';
import { describe, expect, it } from 'vitest';
import { shownState, stalePrices, toSnapshotView } from '../mapping/snapshot.js';
import { divRound, parseFixed, SCALE } from '../math/fixed.js';
import { getAmountsForLiquidity } from '../math/liquidity-amounts.js';
import { getSqrtRatioAtTick } from '../math/tick-math.js';
import type { VaultRecord } from '../records/envelope.js';
import { closeBlock, createVaultState, evolve, foldRecord } from './evolve.js';
import { performanceFeeDueUsd } from './fees.js';
import { blockReturnIndex, MIN_RETURN_BASE_USD } from './return-index.js';
import type { VaultState } from './state.js';

const usd = (x: string) => parseFixed(x);
const foldAll = (s: VaultState | undefined, rs: readonly VaultRecord[]): VaultState =>
  rs.reduce<VaultState | undefined>((acc, r) => foldRecord(acc, r), s)!;
const fee = (h: History, token: string, amount: bigint) =>
  h.record('fee.charged', { token: token as typeof USDC, amount: amount.toString(), recipient: OTHER });

/** A vault holding 1,000 USDC (created and funded in blocks of their own). */
function funded(): { h: History; s: VaultState } {
  const h = new History();
  return { h, s: foldAll(undefined, [h.created(), h.deposit(USDC, usdc(1000))]) };
}

describe('a fee in the block of a flow settles at its own place (the return index)', () => {
  it('deposit 9,000 then a fee of 100 in one block: 0.99, as in blocks of their own (was 0.90)', () => {
    const a = funded();
    const shared = foldAll(a.s, oneBlock([a.h.deposit(USDC, usdc(9000)), fee(a.h, USDC, usdc(100))]));
    const b = funded();
    const alone = foldAll(b.s, [b.h.deposit(USDC, usdc(9000)), fee(b.h, USDC, usdc(100))]);
    expect(alone.returnIndex).toBe((SCALE * 99n) / 100n);
    expect(shared.returnIndex).toBe(alone.returnIndex);
  });

  it('withdraw 900 then a fee of 10 in one block: 0.90, as in blocks of their own (was 0.99)', () => {
    const a = funded();
    const shared = foldAll(a.s, oneBlock([a.h.withdrawal(USDC, usdc(900)), fee(a.h, USDC, usdc(10))]));
    const b = funded();
    const alone = foldAll(b.s, [b.h.withdrawal(USDC, usdc(900)), fee(b.h, USDC, usdc(10))]);
    expect(alone.returnIndex).toBe((SCALE * 9n) / 10n);
    expect(shared.returnIndex).toBe(alone.returnIndex);
  });

  it('a fee before a deposit in one block counts over the value just before it, not after the deposit', () => {
    const a = funded();
    const shared = foldAll(a.s, oneBlock([fee(a.h, USDC, usdc(100)), a.h.deposit(USDC, usdc(9000))]));
    expect(shared.returnIndex).toBe((SCALE * 9n) / 10n); // 100 of 1,000
  });

  it('blockReturnIndex: earnings before the first flow, each fee over the value just before it', () => {
    const v = (x: number) => BigInt(x) * SCALE;
    const at = (valueUsd: bigint, highWaterUsd: bigint, rateBps = 0) => ({ valueUsd, highWaterUsd, rateBps });
    // rate 0 (nothing accrues): start 1,000, earned 100 (1,100), deposit 900 (2,000), fee 20 (1,980)
    const i = blockReturnIndex(SCALE, at(v(1000), v(1000)), at(v(1980), v(1900)), [
      { kind: 'in', valueUsd: v(900), rateBps: 0 },
      { kind: 'fee', valueUsd: v(20), rateBps: 0 },
    ]);
    expect(i).toBe((((SCALE * 11n) / 10n) * 99n) / 100n);
    // on dust no sub-period; a fee taking more than the value floors at 0
    expect(blockReturnIndex(SCALE, at(MIN_RETURN_BASE_USD - 1n, 0n), at(v(5), 0n), [])).toBe(SCALE);
    expect(
      blockReturnIndex(SCALE, at(v(10), v(10)), at(0n, v(10)), [
        { kind: 'fee', valueUsd: v(10), rateBps: 0 },
      ]),
    ).toBe(0n);
  });

  it('blockReturnIndex at 20 %: the gain is net of its fee as earned; a charge of the accrual moves nothing', () => {
    const v = (x: number) => BigInt(x) * SCALE;
    const at = (valueUsd: bigint, highWaterUsd: bigint) => ({ valueUsd, highWaterUsd, rateBps: 2000 });
    // 1,000 → 1,100 with the mark at 1,000: 20 accrues, 1,080 net.
    const earned = blockReturnIndex(SCALE, at(v(1000), v(1000)), at(v(1100), v(1000)), []);
    expect(earned).toBe((SCALE * 108n) / 100n);
    // The next block charges the 20 (the mark settles at 1,080): the index stays.
    const fee = [{ kind: 'fee' as const, valueUsd: v(20), rateBps: 2000 }];
    expect(blockReturnIndex(earned, at(v(1100), v(1000)), at(v(1080), v(1080)), fee)).toBe(earned);
    // Charging 30 (10 more than accrued) is a loss of those 10 on 1,080.
    const over = [{ kind: 'fee' as const, valueUsd: v(30), rateBps: 2000 }];
    expect(blockReturnIndex(earned, at(v(1100), v(1000)), at(v(1070), v(1070)), over)).toBe(
      divRound(earned * v(1070), v(1080)),
    );
  });
});

describe('a snapshot shows block-end figures only', () => {
  it('a batch cut inside a block serves the previous block end, not a fake gain', () => {
    const h = new History();
    const s = foldAll(undefined, [h.created(), h.deposit(USDC, usdc(1000))]);
    const [first, second] = oneBlock([h.deposit(USDC, usdc(1000)), h.deposit(USDC, usdc(1000))]);
    const mid = evolve(s, first!);
    // Folded as it stands, the open block pairs 3,000 held with 2,000 put in.
    expect(mid.valueUsd).toBe(usd('3000'));
    expect(mid.capitalInUsd).toBe(usd('2000'));
    const view = toSnapshotView(mid);
    expect(view).toEqual(toSnapshotView(s));
    expect(view).toMatchObject({ valueUsd: 1000, capitalInUsd: 1000, netUsd: 0, blockNumber: s.blockNumber });
    expect(view.fees.highWaterUsd).toBe(1000);
    const end = evolve(mid, second!);
    expect(toSnapshotView(end)).toMatchObject({ valueUsd: 3000, capitalInUsd: 3000, netUsd: 0 });
    expect(toSnapshotView(end).blockNumber).toBe(second!.blockNumber);
  });

  it('a vault created in the open block shows nothing yet: no value, no capital, idle', () => {
    const h = new History();
    const [created, deposit] = oneBlock([h.created(), h.deposit(USDC, usdc(1000))]);
    const open = createVaultState(created!);
    expect(open.blockStart).toEqual({ end: null, flows: [] });
    // A batch cut before the block's last record.
    const half = evolve(open, { ...deposit!, lastInBlock: false });
    expect(toSnapshotView(half)).toMatchObject({
      valueUsd: 0,
      capitalInUsd: 0,
      netUsd: 0,
      status: 'idle',
      positions: [],
      strategy: 'wide-eth',
    });
    expect(shownState(half).blockStart).toBeUndefined();
    expect(toSnapshotView(evolve(open, deposit!))).toMatchObject({ valueUsd: 1000, capitalInUsd: 1000 });
  });
});

describe('a block whose last record was lost ends when a later block arrives', () => {
  /** 2 WETH at 2,000; block B: withdraw 1 WETH, and a last record that never reaches the fold. */
  function lostLast(): { h: History; open: VaultState; start: VaultState } {
    const h = new History();
    const start = foldAll(undefined, [h.created(), h.deposit(WETH, eth(2))]);
    const [withdrawal] = oneBlock([h.withdrawal(WETH, eth(1)), h.mark()]);
    return { h, open: evolve(start, withdrawal!), start };
  }

  it('WETH 2,000 → 1,000 in the next block halves the index (folded into the open block it read 0.75)', () => {
    const { h, open } = lostLast();
    expect(open.blockStart).toBeDefined();
    const next = evolve(open, h.mark({ weth: '1000' }));
    expect(next.blockStart).toBeUndefined();
    expect(next.returnIndex).toBe(SCALE / 2n);
    expect(next.valueUsd).toBe(usd('1000'));
  });

  it('closeBlock ends it as it stands: the lost flows are booked as reconciliations (a lost withdrawal reads as a loss until retried)', () => {
    const h = new History();
    const start = foldAll(undefined, [h.created(), h.deposit(WETH, eth(2))]);
    // Block B: withdraw 1 WETH, then 0.5 more in the record that is lost (the holdings say 0.5).
    const [first] = oneBlock([h.withdrawal(WETH, eth(1)), h.withdrawal(WETH, eth(0.5))]);
    const open = evolve(start, first!);
    const closed = closeBlock(open);
    expect(closed.blockStart).toBeUndefined();
    expect(closed.reconciled).toEqual([{ token: WETH, amount: -eth(0.5), valueUsd: usd('1000') }]);
    // The log explains 1 WETH out; the other 0.5 is gone unexplained (its record is a dead letter,
    // the snapshot `behind`): a loss, flagged, until `dead-letters retry` re-folds the vault.
    expect(closed.capitalOutUsd).toBe(usd('2000'));
    expect(closed.lostUsd).toBe(usd('1000'));
    expect(closed.drain).toMatchObject({ blockNumber: closed.blockNumber, lostUsd: usd('1000') });
    // The loss counts before the block's withdrawal (its earnings come before its first flow).
    expect(closed.returnIndex).toBe((SCALE * 3n) / 4n);
    expect(closed.highWaterUsd).toBe(divRound(usd('4000') * usd('1000'), usd('3000')));
    expect(closeBlock(closed)).toBe(closed);
  });
});

describe('prices a served figure used', () => {
  it('a feed answering 0 keeps the last valid price, flagged invalid; no deposit is valued at 0', () => {
    const h = new History();
    let s = foldAll(undefined, [h.created(), h.deposit(WETH, eth(1))]);
    s = evolve(s, h.mark({ weth: '0' }));
    expect(s.valueUsd).toBe(usd('2000'));
    expect(s.tokens[WETH]).toMatchObject({ priceInvalid: true, priceUsd: '2000' });
    expect(stalePrices(s)).toEqual([expect.objectContaining({ token: WETH, reason: 'invalid' })]);
    s = evolve(s, h.deposit(WETH, eth(1), { weth: '0' }));
    expect(s.capitalInUsd).toBe(usd('4000'));
    expect(s.valueUsd).toBe(usd('4000'));
    // The price is back: no part of the deposit reads as a gain.
    s = evolve(s, h.mark({ weth: '2000' }));
    expect(s.tokens[WETH]?.priceInvalid).toBe(false);
    expect(s.valueUsd - s.capitalInUsd).toBe(0n);
    expect(s.marketDeltaUsd).toBe(0n);
    expect(s.returnIndex).toBe(SCALE);
    expect(stalePrices(s)).toEqual([]);
  });

  it('a stale price of a benchmark token no longer held is flagged (it moves marketDeltaUsd)', () => {
    const h = new History();
    let s = foldAll(undefined, [h.created(), h.deposit(WETH, eth(1)), h.deposit(USDC, usdc(2000))]);
    // The agent swaps its WETH away (an unexplained outflow for the unit chain), prices then age.
    h.held.balances[WETH] = 0n;
    h.held.balances[USDC] = usdc(4000);
    s = evolve(s, h.mark());
    expect(s.idle[WETH]).toBeUndefined();
    expect(s.benchmark[WETH]).toBeGreaterThan(0n);
    s = evolve(s, h.mark({ weth: '2100', pricesAt: h.ts - 10_000 }));
    expect(s.marketDeltaUsd).not.toBe(0n);
    const flagged = stalePrices(s).map((p) => p.token);
    expect(flagged).toContain(WETH);
    expect(stalePrices(s).find((p) => p.token === WETH)?.reason).toBe('stale');
  });
});

describe('tokens sent straight to the vault are booked at their log position (transfer.received)', () => {
  /** HW 4,000, value 5,000 (1 WETH at 3,000 + 2,000 USDC); basket 1 WETH + 2,000 USDC. */
  function peak(): { h: History; s: VaultState } {
    const h = new History();
    let s = foldAll(undefined, [h.created(), h.deposit(WETH, eth(1)), h.deposit(USDC, usdc(2000))]);
    s = evolve(s, h.mark({ weth: '3000' }));
    expect(s.highWaterUsd).toBe(usd('4000'));
    expect(s.valueUsd).toBe(usd('5000'));
    return { h, s };
  }

  it('1,000 USDC received then 3,000 withdrawn in one block: the chain’s order (HW 2,500, due 100, 0.5 WETH)', () => {
    const { h, s } = peak();
    h.transfer(USDC, usdc(1000));
    const received = h.record('transfer.received', {
      from: OTHER,
      token: USDC,
      amount: usdc(1000).toString(),
    });
    const t = foldAll(s, oneBlock([received, h.withdrawal(USDC, usdc(3000))]));
    expect(t.reconciled).toEqual([]); // explained: nothing left to reconcile
    expect(t.capitalInUsd - s.capitalInUsd).toBe(usd('1000'));
    expect(t.highWaterUsd).toBe(usd('2500'));
    expect(performanceFeeDueUsd(t, t.performanceFeeBps)).toBe(usd('100'));
    expect(t.benchmark[WETH]).toBe(eth(0.5) * SCALE);
    expect(t.returnIndex).toBe(s.returnIndex); // flows are no return
  });

  it('the same transfer with no record is reconciled at the block’s end, after the withdrawal (HW 2,600)', () => {
    const { h, s } = peak();
    h.transfer(USDC, usdc(1000));
    const t = foldAll(s, oneBlock([h.withdrawal(USDC, usdc(3000))]));
    expect(t.reconciled).toEqual([{ token: USDC, amount: usdc(1000), valueUsd: usd('1000') }]);
    expect(t.highWaterUsd).toBe(usd('2600'));
    expect(performanceFeeDueUsd(t, t.performanceFeeBps)).toBe(usd('80'));
  });

  it('a transfer does not put an exited vault back to work', () => {
    const h = new History();
    let s = foldAll(undefined, [h.created(), h.deposit(USDC, usdc(10))]);
    s = foldAll(s, [
      h.record('exit.requested', {}),
      h.withdrawal(USDC, usdc(10)),
      h.record('exit.completed', {}),
    ]);
    h.transfer(USDC, usdc(5));
    s = evolve(s, h.record('transfer.received', { from: OTHER, token: USDC, amount: usdc(5).toString() }));
    expect(s.exited).toBe(true);
    expect(toSnapshotView(s).status).toBe('exiting');
  });
});

describe('liquidity minted for the vault by someone else is the vault’s (position.received)', () => {
  /** A gift of `liquidity` in [lo, up) around the pool tick, with what the pool took for it. */
  function gift(h: History, liquidity: bigint, lo = TICK_2000 - 600, up = TICK_2000 + 600) {
    const { amount0, amount1 } = getAmountsForLiquidity(
      getSqrtRatioAtTick(h.market.tick),
      getSqrtRatioAtTick(lo),
      getSqrtRatioAtTick(up),
      liquidity,
    );
    return h.record('position.received', {
      from: OTHER,
      pool: POOL,
      tickLower: lo,
      tickUpper: up,
      liquidity: liquidity.toString(),
      amount0: amount0.toString(),
      amount1: amount1.toString(),
    });
  }

  it('valued, shown in positions, and booked as capital in: no gain, no return, the mark and basket grow', () => {
    const { h, s } = funded();
    const t = evolve(s, gift(h, 10n ** 15n));
    const view = toSnapshotView(t);
    expect(view.positions).toHaveLength(1);
    const added = t.valueUsd - s.valueUsd;
    expect(added).toBeGreaterThan(usd('100'));
    // capital in = what the pool took (the amounts at the block's prices): within rounding of the value
    const capital = t.capitalInUsd - s.capitalInUsd;
    expect(capital > added ? capital - added : added - capital).toBeLessThan(usd('0.000001'));
    expect(Math.abs(view.netUsd - toSnapshotView(s).netUsd)).toBeLessThan(1e-6);
    expect(t.returnIndex).toBe(s.returnIndex);
    expect(t.highWaterUsd - s.highWaterUsd).toBe(capital);
    expect(t.benchmark[WETH]).toBeGreaterThan(0n);
    expect(t.reconciled).toEqual([]);
  });

  it('into an open range of the vault’s own (the pool merges them): the same capital in, one position', () => {
    const { h, s } = funded();
    const lo = TICK_2000 - 600;
    const up = TICK_2000 + 600;
    const opened = foldRecord(
      s,
      h.record('position.opened', {
        positionId: '1',
        pool: POOL,
        tickLower: lo,
        tickUpper: up,
        liquidity: '1000',
        amount0: '0',
        amount1: '0',
      }),
    );
    const t = evolve(opened, gift(h, 10n ** 15n, lo, up));
    expect(toSnapshotView(t).positions.map((p) => p.id)).toEqual(['1']);
    expect(t.capitalInUsd - opened.capitalInUsd).toBeGreaterThan(usd('100'));
  });

  it('later gains of the gifted position are performance; an exited vault stays exited', () => {
    const h = new History();
    let s = foldAll(undefined, [h.created(), h.deposit(USDC, usdc(10))]);
    s = foldAll(s, [
      h.record('exit.requested', {}),
      h.withdrawal(USDC, usdc(10)),
      h.record('exit.completed', {}),
    ]);
    s = evolve(s, gift(h, 10n ** 15n));
    expect(s.exited).toBe(true);
    const before = toSnapshotView(s).netUsd;
    const up = evolve(s, h.mark({ weth: '2100' }));
    expect(toSnapshotView(up).netUsd).toBeGreaterThan(before);
  });

  it('a pool missing from the record’s context breaks the log’s rules: refused, named', () => {
    const { h, s } = funded();
    const r = gift(h, 10n ** 15n);
    const bad = { ...r, payload: { ...r.payload, pool: OTHER } } as VaultRecord;
    expect(() => evolve(s, bad)).toThrow(/pool .* not in the context/);
  });
});
