import { ARB, eth, History, OTHER, POOL, TICK_2000, USDC, usdc, WETH } from '@vault-yield/test-kit/domain';
import { describe, expect, it } from 'vitest';
import { toSnapshotView } from '../mapping/snapshot.js';
import { getLiquidityForAmount0 } from '../math/liquidity-amounts.js';
import { getSqrtRatioAtTick } from '../math/tick-math.js';
import type { VaultStatus } from '../views/index.js';
import { createVaultState, evolve } from './evolve.js';
import type { VaultState } from './state.js';
import { DUST_USD, statusOf } from './status.js';

const IN = { lower: TICK_2000 - 600, upper: TICK_2000 + 600 };
const ABOVE = { lower: TICK_2000 + 1000, upper: TICK_2000 + 2000 }; // all WETH, out of range

/** A little scenario driver: holds the history and the state, applies records by name. */
function vault() {
  const h = new History();
  let s: VaultState = createVaultState(h.created());
  const api = {
    h,
    get s() {
      return s;
    },
    get status(): VaultStatus {
      return statusOf(s);
    },
    deposit(amount = eth(1)) {
      s = evolve(s, h.deposit(WETH, amount));
      return api;
    },
    withdrawAll() {
      for (const [token, amount] of Object.entries(s.idle)) s = evolve(s, h.withdrawal(token, amount));
      return api;
    },
    /** Opens a WETH-only position of `amount` (its liquidity for that amount) in `range`. */
    open(id: string, range: { lower: number; upper: number }, amount = eth(0.5)) {
      const l =
        amount === 0n
          ? 0n
          : getLiquidityForAmount0(getSqrtRatioAtTick(range.lower), getSqrtRatioAtTick(range.upper), amount);
      s = evolve(
        s,
        h.record('position.opened', {
          positionId: id,
          pool: POOL,
          tickLower: range.lower,
          tickUpper: range.upper,
          liquidity: l.toString(),
          amount0: amount.toString(),
          amount1: '0',
        }),
      );
      return api;
    },
    resize(id: string, liquidity: bigint) {
      s = evolve(
        s,
        h.record('position.resized', {
          positionId: id,
          liquidity: liquidity.toString(),
          amount0Delta: '0',
          amount1Delta: '0',
        }),
      );
      return api;
    },
    rebalance(id: string, range: { lower: number; upper: number }) {
      const p = s.positions[id]!;
      s = evolve(
        s,
        h.record('position.rebalanced', {
          positionId: id,
          tickLower: range.lower,
          tickUpper: range.upper,
          liquidity: p.liquidity.toString(),
          amount0Out: '0',
          amount1Out: '0',
          amount0In: '0',
          amount1In: '0',
        }),
      );
      return api;
    },
    close(id: string, amount0 = 0n) {
      s = evolve(
        s,
        h.record('position.closed', { positionId: id, amount0: amount0.toString(), amount1: '0' }),
      );
      return api;
    },
    mark(tick: number) {
      s = evolve(s, h.mark({ tick }));
      return api;
    },
    send(type: 'suspended' | 'resumed' | 'exit.requested' | 'exit.completed') {
      s = evolve(
        s,
        type === 'suspended' ? h.record(type, { reason: 'paused by guardian' }) : h.record(type, {}),
      );
      return api;
    },
  };
  return api;
}

const idle = () => vault();
const aiming = () => vault().deposit();
const earning = () => aiming().open('1', IN);
const attention = () => aiming().open('1', ABOVE);

describe('status transitions (every edge of the table in status.ts)', () => {
  it('(none) → idle on vault.created', () => expect(idle().status).toBe('idle'));

  it('idle → aiming on deposit, on rewards.accrued, on a zero-liquidity position', () => {
    expect(idle().deposit().status).toBe('aiming');
    const v = idle();
    const reward = (amount: bigint) =>
      v.h.record('rewards.accrued', { rewardToken: ARB, amount: amount.toString() });
    expect(statusOf(evolve(v.s, reward(eth(1))))).toBe('aiming'); // 0.5 USD
    expect(aiming().withdrawAll().open('1', IN, 0n).status).toBe('idle');
    expect(idle().deposit(eth(0.01)).open('1', IN, 0n).status).toBe('aiming');
  });

  it('dust is not capital: under DUST_USD (0.01 USD) a vault is idle, pending rewards still shown', () => {
    // 1 wei of USDC left by a withdrawal, or sent by a stranger: 10^-6 USD
    const left = aiming().deposit(eth(0)).withdrawAll();
    const s = evolve(left.s, left.h.deposit(USDC, 1n));
    expect(s.valueUsd).toBeGreaterThan(0n);
    expect(statusOf(s)).toBe('idle');
    const h = left.h;
    h.transfer(USDC, 9_998n); // 9,999 wei in all: 0.01 USD − 10^-6, still dust
    const s2 = evolve(s, h.mark());
    expect(statusOf(s2)).toBe('idle');
    h.transfer(USDC, 1n); // exactly 0.01 USD: capital
    expect(statusOf(evolve(s2, h.mark()))).toBe('aiming');
    // a sub-cent reward with no position: idle, and the snapshot shows it
    const v = idle();
    const r = evolve(
      v.s,
      v.h.record('rewards.accrued', { rewardToken: ARB, amount: (10n ** 16n).toString() }),
    );
    expect(statusOf(r)).toBe('idle');
    expect(toSnapshotView(r).pendingRewardsUsd).toBe(0.005);
    expect(DUST_USD).toBe(10n ** 16n);
  });

  it('idle stays idle on a zero deposit or a mark', () => {
    expect(idle().deposit(0n).status).toBe('idle');
    expect(idle().mark(TICK_2000 + 5).status).toBe('idle');
  });

  it('aiming → idle when a withdrawal or a fee empties the vault', () => {
    expect(aiming().withdrawAll().status).toBe('idle');
    const v = aiming();
    const fee = v.h.record('fee.charged', { token: WETH, amount: eth(1).toString(), recipient: OTHER });
    expect(statusOf(evolve(v.s, fee))).toBe('idle');
  });

  it('aiming → earning / attention when a position is deployed in / out of range', () => {
    expect(aiming().open('1', IN).status).toBe('earning');
    expect(aiming().open('1', ABOVE).status).toBe('attention');
    expect(aiming().open('1', IN, 0n).status).toBe('aiming');
    expect(
      aiming()
        .open('1', IN, 0n)
        .resize('1', 10n ** 15n).status,
    ).toBe('earning');
    expect(
      aiming()
        .open('1', ABOVE, 0n)
        .resize('1', 10n ** 15n).status,
    ).toBe('attention');
  });

  it('earning → attention when the tick leaves a range, or a rebalance / open goes out of range', () => {
    expect(earning().mark(IN.upper).status).toBe('attention');
    expect(earning().mark(IN.lower - 1).status).toBe('attention');
    expect(earning().mark(IN.lower).status).toBe('earning');
    expect(earning().rebalance('1', ABOVE).status).toBe('attention');
    expect(earning().open('2', ABOVE, eth(0.1)).status).toBe('attention');
  });

  it('attention → earning when the tick re-enters, or rebalance / close / resize-to-0 leaves only in-range', () => {
    expect(
      earning()
        .mark(IN.upper)
        .mark(IN.upper - 1).status,
    ).toBe('earning');
    expect(attention().rebalance('1', IN).status).toBe('earning');
    const two = () => earning().open('2', ABOVE, eth(0.1));
    expect(two().status).toBe('attention');
    expect(two().close('2', eth(0.1)).status).toBe('earning');
    expect(two().resize('2', 0n).status).toBe('earning');
  });

  it('earning / attention → aiming when the last deployed position is closed or resized to 0', () => {
    expect(earning().close('1', eth(0.5)).status).toBe('aiming');
    expect(attention().close('1', eth(0.5)).status).toBe('aiming');
    expect(earning().resize('1', 0n).status).toBe('aiming');
    expect(attention().resize('1', 0n).status).toBe('aiming');
  });

  it('earning / attention → idle when closing leaves nothing', () => {
    const all = () => vault().deposit(eth(0.5));
    expect(all().open('1', IN).close('1', 0n).status).toBe('idle');
    expect(all().open('1', ABOVE).close('1', 0n).status).toBe('idle');
  });

  it('any status but suspended → suspended', () => {
    for (const make of [idle, aiming, earning, attention, () => aiming().send('exit.requested')]) {
      const v = make().send('suspended');
      expect(v.status).toBe('suspended');
      expect(v.s.suspension).toEqual({ reason: 'paused by guardian', since: v.h.ts * 1000 });
    }
  });

  it('suspended stays suspended on any other record', () => {
    expect(earning().send('suspended').mark(IN.upper).status).toBe('suspended');
    expect(earning().send('suspended').withdrawAll().status).toBe('suspended');
    expect(idle().send('suspended').deposit().status).toBe('suspended');
    expect(earning().send('suspended').send('exit.requested').status).toBe('suspended');
  });

  it('suspended → derived status on resumed, or exiting if an exit was requested', () => {
    expect(idle().send('suspended').send('resumed').status).toBe('idle');
    expect(aiming().send('suspended').send('resumed').status).toBe('aiming');
    expect(earning().send('suspended').send('resumed').status).toBe('earning');
    expect(earning().send('suspended').mark(IN.upper).send('resumed').status).toBe('attention');
    expect(earning().send('suspended').send('exit.requested').send('resumed').status).toBe('exiting');
    expect(earning().send('suspended').send('resumed').s.suspension).toBeNull();
  });

  it('idle / aiming / earning / attention → exiting on exit.requested', () => {
    for (const make of [idle, aiming, earning, attention])
      expect(make().send('exit.requested').status).toBe('exiting');
  });

  it('exiting stays exiting on other records, and yields to suspended', () => {
    const ex = () => earning().send('exit.requested');
    expect(ex().mark(IN.upper).status).toBe('exiting');
    expect(ex().close('1', eth(0.5)).withdrawAll().status).toBe('exiting');
    expect(ex().send('suspended').status).toBe('suspended');
  });

  it('exiting → idle on exit.completed when empty, else exiting while anything is left to hand back', () => {
    expect(
      earning().send('exit.requested').close('1', eth(0.5)).withdrawAll().send('exit.completed').status,
    ).toBe('idle');
    // Idle WETH left after the exit: never `aiming` (it read aiming before fold version 3).
    expect(earning().send('exit.requested').close('1', eth(0.5)).send('exit.completed').status).toBe(
      'exiting',
    );
    expect(earning().send('exit.requested').send('exit.completed').status).toBe('exiting');
    expect(attention().send('exit.requested').send('exit.completed').status).toBe('exiting');
  });

  it('after an exit: unclaimed rewards keep it exiting, handing them back makes it idle, a deposit puts it back to work', () => {
    const reward = (v: ReturnType<typeof vault>, amount: bigint) =>
      evolve(v.s, v.h.record('rewards.accrued', { rewardToken: ARB, amount: amount.toString() }));
    // Everything withdrawn, 10 ARB (5 USD) of rewards still unclaimed when the exit completes.
    const v = earning().send('exit.requested').close('1', eth(0.5)).withdrawAll();
    const rewarded = reward(v, eth(10));
    const done = evolve(rewarded, v.h.record('exit.completed', {}));
    expect(done.valueUsd).toBeGreaterThanOrEqual(DUST_USD);
    expect(statusOf(done)).toBe('exiting');
    // Claimed and withdrawn: nothing left to hand back.
    const claimed = evolve(
      done,
      v.h.record('rewards.claimed', { rewardToken: ARB, amount: eth(10).toString() }),
    );
    expect(statusOf(claimed)).toBe('exiting');
    const out = evolve(claimed, v.h.withdrawal(ARB, eth(10)));
    expect(statusOf(out)).toBe('idle');
    // idle (exited) → exiting when something of value reaches it again (a transfer, say)…
    v.h.transfer(USDC, usdc(3));
    const gift = evolve(out, v.h.mark());
    expect(statusOf(gift)).toBe('exiting');
    // …and a deposit puts the vault back to work: the derived status again.
    expect(statusOf(evolve(gift, v.h.deposit(WETH, eth(1))))).toBe('aiming');
    // a new position also clears it
    const w = earning().send('exit.requested').send('exit.completed');
    expect(w.status).toBe('exiting');
    expect(w.open('2', IN).status).toBe('earning');
  });

  it('USDC-only capital is capital too', () => {
    const v = vault();
    expect(statusOf(evolve(v.s, v.h.deposit(USDC, usdc(1))))).toBe('aiming');
  });
});
