import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quantity } from './logs.js';

describe('quantity (a log position read without BigInt)', () => {
  it('is Number(BigInt(h)) for every hex quantity, small or past 2^53', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 80n) - 1n }), fc.boolean(), (v, upper) => {
        const digits = v.toString(16);
        const h = `0x${upper ? digits.toUpperCase() : digits}`;
        expect(quantity(h)).toBe(Number(BigInt(h)));
      }),
    );
  });

  it('refuses what is no quantity, as BigInt does', () => {
    for (const h of ['0x', '0xzz', '0x1.5', '1e3', '0x1g']) expect(() => quantity(h)).toThrow(SyntaxError);
  });
});
