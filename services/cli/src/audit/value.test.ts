import { describe, expect, it } from 'vitest';
import { chainUsd, formatUsd, holdingUsd, parseUsd, servedUsd } from './value.js';

const E18 = 10n ** 18n;

describe('the audit arithmetic (10^-18 USD, exact)', () => {
  it('reads a served number as JavaScript printed it, exponents included', () => {
    expect(servedUsd(12_345.678901)).toBe(12_345_678_901n * 10n ** 12n);
    expect(servedUsd(1e-7)).toBe(10n ** 11n);
    expect(servedUsd(-0.5)).toBe(-E18 / 2n);
    expect(servedUsd(1.5e21)).toBe(15n * 10n ** 38n);
    expect(parseUsd('0.01')).toBe(E18 / 100n);
    expect(() => parseUsd('1,5')).toThrow(TypeError);
  });

  it('values a holding as balance × answer / 10^(decimals + feed decimals)', () => {
    const weth = { token: '0x01', feed: '0x02', decimals: 18, feedDecimals: 8 } as const;
    // 2.5 WETH at $2950.12345678
    expect(holdingUsd({ ...weth, balance: 25n * 10n ** 17n, answer: 295_012_345_678n })).toBe(
      7_375_308_641_950n * 10n ** 9n,
    );
    const usdc = {
      token: '0x03',
      feed: '0x04',
      decimals: 6,
      feedDecimals: 8,
      balance: 1_000_001n,
      answer: 10n ** 8n,
    } as const;
    expect(chainUsd([usdc, usdc])).toBe(2_000_002n * 10n ** 12n);
  });

  it('prints 6 decimals, rounded half away from zero', () => {
    expect(formatUsd(0n)).toBe('0.000000');
    expect(formatUsd(1_234_567_500_000_000_000n)).toBe('1.234568');
    expect(formatUsd(-1_234_567_500_000_000_000n)).toBe('-1.234568');
    expect(formatUsd(-1n)).toBe('0.000000');
    expect(formatUsd(5n * E18, 18)).toBe('5.000000000000000000');
  });
});
