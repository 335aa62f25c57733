import { describe, expect, it } from 'vitest';
import { SCALE } from '../math/fixed.js';
import { createVaultState, evolve } from './evolve.js';
import { eth, History, USDC, usdc, WETH } from './fixtures.js';
import { MIN_RETURN_BASE_USD, nextReturnIndex } from './returns.js';

describe('return index (exact, flows removed)', () => {
  it('moves with prices, not with deposits or withdrawals', () => {
    const h = new History();
    let s = createVaultState(h.created());
    expect(s.returnIndex).toBe(SCALE);
    s = evolve(s, h.deposit(WETH, eth(1))); // 2000: base 0, no sub-period
    expect(s.returnIndex).toBe(SCALE);
    s = evolve(s, h.mark({ weth: '2200' })); // +10 %
    expect(s.returnIndex).toBe(SCALE + SCALE / 10n);
    s = evolve(s, h.deposit(USDC, usdc(800))); // 3000, flat
    s = evolve(s, h.withdrawal(USDC, usdc(300))); // 2700, flat
    expect(s.returnIndex).toBe(SCALE + SCALE / 10n);
  });

  it('a sub-period starting on dust (under 1 USD) is not a return', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(USDC, 1n)); // 10^-6 USD of dust
    s = evolve(s, h.deposit(USDC, usdc(1000))); // exact: flat anyway
    h.transfer(USDC, 1n);
    const dusty = evolve(createVaultState(new History().created()), new History().deposit(USDC, 5n));
    expect(nextReturnIndex(dusty, { ...dusty, valueUsd: dusty.valueUsd * 2n })).toBe(SCALE);
    expect(s.returnIndex).toBe(SCALE);
    expect(MIN_RETURN_BASE_USD).toBe(SCALE);
  });

  it('a loss beyond the whole value floors the index at 0', () => {
    const before = { valueUsd: 10n * SCALE, capitalInUsd: 0n, capitalOutUsd: 0n, returnIndex: SCALE };
    expect(nextReturnIndex(before, { valueUsd: 0n, capitalInUsd: 5n * SCALE, capitalOutUsd: 0n })).toBe(0n);
  });
});
