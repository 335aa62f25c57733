import { eth, History, OTHER, POOL, TICK_2000, USDC, usdc, WETH } from '@vault-yield/test-kit/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldRecord } from '../fold/evolve.js';
import type { VaultState } from '../fold/state.js';
import type { VaultRecord } from '../records/envelope.js';
import { ledgerAmounts, wholeTokens } from './amounts.js';

/** A history folded as the projector folds it: each record's amounts read with the state after it. */
function folded() {
  const h = new History();
  let s: VaultState | undefined;
  const amounts = (r: VaultRecord) => {
    s = foldRecord(s, r);
    return ledgerAmounts(r, s);
  };
  return { h, amounts };
}

describe('ledger amounts: symbols, whole tokens and USD at the row’s block', () => {
  it('a deposit: its token’s symbol, whole tokens, and the value at the record’s prices', () => {
    const { h, amounts } = folded();
    amounts(h.created());
    expect(amounts(h.deposit(WETH, eth(1.5), { weth: '2000' }))).toEqual([
      { field: 'amount', token: WETH, symbol: 'WETH', amount: '1.5', valueUsd: 3000 },
    ]);
    // the price of the row's own block, not a later one
    expect(amounts(h.deposit(WETH, eth(1), { weth: '2500' }))).toEqual([
      { field: 'amount', token: WETH, symbol: 'WETH', amount: '1', valueUsd: 2500 },
    ]);
    expect(amounts(h.deposit(USDC, usdc(12.345678)))).toEqual([
      { field: 'amount', token: USDC, symbol: 'USDC', amount: '12.345678', valueUsd: 12.345678 },
    ]);
  });

  it('a feed’s non-answer: the last valid price, as the fold values with (never 0)', () => {
    const { h, amounts } = folded();
    amounts(h.created());
    amounts(h.deposit(WETH, eth(1), { weth: '2000' }));
    expect(amounts(h.deposit(WETH, eth(1), { weth: '0' }))[0]?.valueUsd).toBe(2000);
  });

  it('positions: amount0 / amount1 of the pool’s tokens; signed deltas; a rebalance’s four legs', () => {
    const { h, amounts } = folded();
    amounts(h.created());
    amounts(h.deposit(WETH, eth(2)));
    amounts(h.deposit(USDC, usdc(4000)));
    const opened = h.record('position.opened', {
      positionId: '1',
      pool: POOL,
      tickLower: TICK_2000 - 600,
      tickUpper: TICK_2000 + 600,
      liquidity: '1000',
      amount0: eth(1).toString(),
      amount1: usdc(2000).toString(),
    });
    expect(amounts(opened).map((a) => [a.field, a.symbol, a.amount, a.valueUsd])).toEqual([
      ['amount0', 'WETH', '1', 2000],
      ['amount1', 'USDC', '2000', 2000],
    ]);
    const resized = h.record('position.resized', {
      positionId: '1',
      liquidity: '500',
      amount0Delta: (-eth(0.5)).toString(),
      amount1Delta: (-usdc(1000)).toString(),
    });
    expect(amounts(resized).map((a) => [a.field, a.amount, a.valueUsd])).toEqual([
      ['amount0Delta', '-0.5', -1000],
      ['amount1Delta', '-1000', -1000],
    ]);
    const rebalanced = h.record('position.rebalanced', {
      positionId: '1',
      tickLower: TICK_2000 - 1200,
      tickUpper: TICK_2000 + 1200,
      liquidity: '400',
      amount0Out: eth(0.5).toString(),
      amount1Out: usdc(1000).toString(),
      amount0In: eth(0.25).toString(),
      amount1In: usdc(500).toString(),
    });
    expect(amounts(rebalanced).map((a) => a.field)).toEqual([
      'amount0Out',
      'amount1Out',
      'amount0In',
      'amount1In',
    ]);
  });

  it('types without token amounts have none; a fee is its token’s', () => {
    const { h, amounts } = folded();
    expect(amounts(h.created())).toEqual([]);
    amounts(h.deposit(USDC, usdc(100)));
    expect(amounts(h.record('strategy.selected', { strategy: 'x' }))).toEqual([]);
    expect(
      amounts(h.record('fee.charged', { token: USDC, amount: usdc(10).toString(), recipient: OTHER })),
    ).toEqual([{ field: 'amount', token: USDC, symbol: 'USDC', amount: '10', valueUsd: 10 }]);
  });

  it('wholeTokens is exact: read back it is the raw amount (property)', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }),
        fc.integer({ min: 0, max: 36 }),
        (raw, d) => {
          const s = wholeTokens(raw, d);
          const [int, frac = ''] = s.replace('-', '').split('.');
          const back = BigInt(int! + frac.padEnd(d, '0')) * (s.startsWith('-') ? -1n : 1n);
          expect(back).toBe(raw);
          expect(s).not.toMatch(/\.$|\.\d*0$/);
        },
      ),
    );
  });
});
