import { describe, expect, it } from 'vitest';
import { NO_PRICE, priceOfAnswer } from '../valuation/decimal.js';
import { asciiToBytes32, bytes32ToAscii } from './bytes32.js';

describe('bytes32 strategy ids', () => {
  it('round-trips right-padded ASCII', () => {
    expect(bytes32ToAscii(asciiToBytes32('eth-usdc-narrow'))).toBe('eth-usdc-narrow');
    expect(bytes32ToAscii(asciiToBytes32('x'.repeat(32)))).toBe('x'.repeat(32));
  });
  it('rejects empty and non-ASCII values', () => {
    expect(bytes32ToAscii(`0x${'00'.repeat(32)}`)).toBeNull();
    expect(bytes32ToAscii(`0x41ff${'00'.repeat(30)}`)).toBeNull();
    expect(bytes32ToAscii(`0x4100${'41'.repeat(30)}`)).toBeNull();
  });
});

describe('priceOfAnswer', () => {
  it('is the answer scaled by the feed decimals, exact, zeros trimmed', () => {
    expect(priceOfAnswer(300000000000n, 8)).toBe('3000');
    expect(priceOfAnswer(184312345678n, 8)).toBe('1843.12345678');
    expect(priceOfAnswer(1n, 8)).toBe('0.00000001');
    expect(priceOfAnswer(7n, 0)).toBe('7');
  });
  it('an answer of zero or less is no price', () => {
    expect(priceOfAnswer(0n, 8)).toBe(NO_PRICE);
    expect(priceOfAnswer(-1n, 8)).toBe(NO_PRICE);
  });
});
