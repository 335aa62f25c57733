import { describe, expect, it } from 'vitest';
import { orientPair, type ScreenResult, screenResult } from './index.js';

const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const asset = (symbol: string, n: number) => ({
  symbol,
  category: 'major' as const,
  venues: ['uniswap-v3'],
  liquidityUsd: 1,
  chainId: 1,
  address: addr(n),
  decimals: 18,
});
const pair = (a: string, b: string) => ({ a, b, venues: ['uniswap-v3'], tvlUsd: 1, emissions: false });
const screen = (pairs: ScreenResult['pairs'], strategies: ScreenResult['strategies'] = {}): unknown => ({
  schemaVersion: 1,
  screenId: 's',
  screenedAt: 1,
  // WETH has the higher address: the pool's order is USDC/WETH
  assets: [asset('USDC', 1), asset('WETH', 2)],
  pairs,
  strategies,
});
const issues = (input: unknown) => {
  const r = screenResult.safeParse(input);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('a pair is one pair in either orientation (#43 item 7)', () => {
  it('a screen naming both orientations of a pair is refused, naming both', () => {
    expect(issues(screen([pair('WETH', 'USDC'), pair('USDC', 'WETH')]))).toEqual([
      'pairs.1: pair USDC/WETH is WETH/USDC the other way round: name a pair once',
    ]);
    expect(issues(screen([pair('WETH', 'USDC'), pair('WETH', 'USDC')]))).toEqual([
      'pairs.1: duplicate pair WETH/USDC',
    ]);
  });

  it('a strategy may aim at a pair named the other way round; one the screen lacks is refused', () => {
    expect(issues(screen([pair('WETH', 'USDC')], { s: [{ a: 'USDC', b: 'WETH', venues: ['x'] }] }))).toEqual(
      [],
    );
    expect(issues(screen([pair('WETH', 'USDC')], { s: [{ a: 'USDC', b: 'USDC', venues: ['x'] }] }))).toEqual([
      'strategies.s.0: pair USDC/USDC is not in pairs',
    ]);
  });

  it("orientPair gives the pool's order (token0 = the lower address), whichever way it was named", () => {
    const addressOf = (s: string) => ({ USDC: addr(1), WETH: addr(2).toUpperCase().replace('0X', '0x') })[s]!;
    const named = { a: 'WETH', b: 'USDC', venues: ['v'] };
    expect(orientPair(named, addressOf)).toEqual({ a: 'USDC', b: 'WETH', venues: ['v'] });
    const oriented = { a: 'USDC', b: 'WETH', venues: ['v'] };
    expect(orientPair(oriented, addressOf)).toBe(oriented);
  });
});
