import { describe, expect, it } from 'vitest';
import { parseFixed } from '../math/fixed.js';
import { createVaultState, evolve } from './evolve.js';
import { PERFORMANCE_FEE_BPS, performanceFeeDueRaw, performanceFeeDueUsd, settleHighWater } from './fees.js';
import { eth, History, OTHER, USDC, usdc, WETH } from './fixtures.js';
import type { VaultState } from './state.js';

const usd = parseFixed;
const RATE = 2000; // 20 %

/** Charges exactly the fee due, in USDC. */
function charge(h: History, s: VaultState): VaultState {
  const raw = performanceFeeDueRaw(s, USDC, RATE);
  return evolve(s, h.record('fee.charged', { token: USDC, amount: raw.toString(), recipient: OTHER }));
}

describe('performance fee with a high-water mark', () => {
  it('is due only above the previous peak, and the peak resets to the post-fee value', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(WETH, eth(1))); // 2000
    s = evolve(s, h.deposit(USDC, usdc(2000))); // 4000, HW 4000
    expect(performanceFeeDueUsd(s, RATE)).toBe(0n);

    s = evolve(s, h.mark({ weth: '3000' })); // 5000
    expect(performanceFeeDueUsd(s, RATE)).toBe(usd('200'));
    s = charge(h, s); // pays 200 USDC → 4800
    expect(s.highWaterUsd).toBe(usd('4800'));
    expect(s.taxedUsd).toBe(usd('200'));
    expect(performanceFeeDueUsd(s, RATE)).toBe(0n);

    s = evolve(s, h.mark({ weth: '2500' })); // 4300: below the peak
    expect(performanceFeeDueUsd(s, RATE)).toBe(0n);
    s = evolve(s, h.mark({ weth: '3000' })); // back to 4800 = the peak: still nothing
    expect(performanceFeeDueUsd(s, RATE)).toBe(0n);
    s = evolve(s, h.mark({ weth: '3100' })); // 4900: only the 100 above the peak
    expect(performanceFeeDueUsd(s, RATE)).toBe(usd('20'));
  });

  it('the mark does not follow the value between charges', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(USDC, usdc(1000)));
    s = evolve(s, h.deposit(WETH, eth(1), { weth: '1000' })); // 2000
    s = evolve(s, h.mark({ weth: '1500' })); // 2500, no charge
    s = evolve(s, h.mark({ weth: '1200' })); // 2200
    expect(s.highWaterUsd).toBe(usd('2000'));
    expect(performanceFeeDueUsd(s, RATE)).toBe(usd('40'));
  });

  it('deposits raise and withdrawals scale the mark, so flows never create a fee', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(USDC, usdc(1000)));
    s = evolve(s, h.deposit(WETH, eth(1))); // 3000
    s = evolve(s, h.mark({ weth: '3000' })); // 4000, gain 1000
    expect(performanceFeeDueUsd(s, RATE)).toBe(usd('200'));
    s = evolve(s, h.withdrawal(USDC, usdc(1000))); // value 3000, HW 3000·(1 − 1000/4000) = 2250
    expect(s.highWaterUsd).toBe(usd('2250'));
    expect(performanceFeeDueUsd(s, RATE)).toBe(usd('150')); // the gain scaled pro rata
    s = evolve(s, h.deposit(USDC, usdc(500)));
    expect(performanceFeeDueUsd(s, RATE)).toBe(usd('150'));
  });

  it('a partial charge raises the mark only by the gain it settled, net of the charge', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(WETH, eth(1))); // 2000
    s = evolve(s, h.deposit(USDC, usdc(2000))); // 4000, HW 4000
    s = evolve(s, h.mark({ weth: '3000' })); // 5000: gain 1000, due 200 at 20 %
    expect(performanceFeeDueUsd(s, PERFORMANCE_FEE_BPS)).toBe(usd('200'));
    s = evolve(s, h.record('fee.charged', { token: USDC, amount: usdc(50).toString(), recipient: OTHER }));
    // 50 settles a gain of 250 (50 / 20 %): the mark rises by 250 − 50 = 200, not to 4950
    expect(s.highWaterUsd).toBe(usd('4200'));
    expect(performanceFeeDueUsd(s, PERFORMANCE_FEE_BPS)).toBe(usd('150'));
    s = evolve(s, h.record('fee.charged', { token: USDC, amount: usdc(150).toString(), recipient: OTHER }));
    expect(s.highWaterUsd).toBe(usd('4800')); // the whole gain settled: the post-fee value
    expect(s.valueUsd).toBe(usd('4800'));
    expect(s.taxedUsd).toBe(usd('200'));
    expect(performanceFeeDueUsd(s, PERFORMANCE_FEE_BPS)).toBe(0n);
  });

  it('settleHighWater: rate 0 settles the whole gain; a charge with no gain keeps the mark', () => {
    expect(settleHighWater(usd('100'), usd('150'), usd('10'), 0)).toBe(usd('140'));
    expect(settleHighWater(usd('100'), usd('90'), usd('10'))).toBe(usd('100'));
    expect(settleHighWater(usd('100'), usd('150'), usd('30'))).toBe(usd('120')); // over-charge: G − C
  });

  it('an over-charge never lowers the mark', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(USDC, usdc(1000)));
    s = evolve(s, h.record('fee.charged', { token: USDC, amount: usdc(100).toString(), recipient: OTHER }));
    expect(s.highWaterUsd).toBe(usd('1000'));
    expect(performanceFeeDueUsd(s, RATE)).toBe(0n);
  });

  it('validates the rate', () => {
    const s = { valueUsd: 1n, highWaterUsd: 0n };
    expect(() => performanceFeeDueUsd(s, -1)).toThrow(RangeError);
    expect(() => performanceFeeDueUsd(s, 10_001)).toThrow(RangeError);
    expect(() => performanceFeeDueUsd(s, 1.5)).toThrow(RangeError);
    expect(performanceFeeDueUsd({ valueUsd: usd('10'), highWaterUsd: 0n }, 10_000)).toBe(usd('10'));
  });
});
