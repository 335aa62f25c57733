import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  divRound,
  divRoundPow10,
  fixedToNumber,
  formatFixed,
  formatScaled,
  parseFixed,
  SCALE,
  scaleBy,
  tokenValue,
  toMicros,
  usdToRaw,
} from './fixed.js';

describe('fixed-point decimals (10^18)', () => {
  it('parses decimal strings exactly', () => {
    expect(parseFixed('1843.12345678')).toBe(1843123456780000000000n);
    expect(parseFixed('0')).toBe(0n);
    expect(parseFixed('42')).toBe(42n * SCALE);
    expect(parseFixed('-0.5')).toBe(-SCALE / 2n);
    expect(parseFixed('0.000000000000000001')).toBe(1n);
  });

  it('rounds more than 18 decimals half to even', () => {
    expect(parseFixed('0.0000000000000000005')).toBe(0n);
    expect(parseFixed('0.0000000000000000015')).toBe(2n);
    expect(parseFixed('0.00000000000000000051')).toBe(1n);
  });

  it('rejects junk', () => {
    expect(() => parseFixed('1e5')).toThrow(RangeError);
    expect(() => parseFixed('')).toThrow(RangeError);
    expect(() => parseFixed('1.')).toThrow(RangeError);
    for (const junk of ['.5', '-', '-.5', '1.2.3', '1,5', ' 1', '1 ', '+1', '0x10', '1..2'])
      expect(() => parseFixed(junk), junk).toThrow(RangeError);
  });

  it('parses short and long strings alike (a price of up to 15 digits takes a path of its own)', () => {
    // The reference: the decimal's digits as one integer, scaled or rounded half-even to 18 places.
    const reference = (neg: boolean, int: string, frac: string): bigint => {
      const digits = BigInt(int + frac);
      const v =
        frac.length <= 18
          ? digits * 10n ** BigInt(18 - frac.length)
          : divRound(digits, 10n ** BigInt(frac.length - 18));
      return neg ? -v : v;
    };
    const digitString = (min: number, max: number) =>
      fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((d) => d.join(''));
    fc.assert(
      fc.property(
        fc.boolean(),
        digitString(1, 20).map((d) => d.replace(/^0+(?=.)/, '')),
        fc.option(digitString(1, 24), { nil: undefined }),
        (neg, int, frac) => {
          const s = `${neg ? '-' : ''}${int}${frac === undefined ? '' : `.${frac}`}`;
          expect(parseFixed(s)).toBe(reference(neg, int, frac ?? ''));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('divRound is half-even for both signs', () => {
    expect(divRound(5n, 2n)).toBe(2n);
    expect(divRound(7n, 2n)).toBe(4n);
    expect(divRound(-5n, 2n)).toBe(-2n);
    expect(divRound(-7n, 2n)).toBe(-4n);
    expect(divRound(-6n, 4n)).toBe(-2n);
    expect(divRound(6n, 4n)).toBe(2n);
    expect(divRound(2n, 3n)).toBe(1n);
    expect(() => divRound(1n, 0n)).toThrow(RangeError);
  });

  /** Half-even by the definition: the remainder doubled against the divisor. */
  const byDefinition = (n: bigint, d: bigint): bigint => {
    let q = n / d;
    const r = n - q * d;
    const twice = (r < 0n ? -r : r) * 2n;
    if (twice > d || (twice === d && (q & 1n) !== 0n)) q += n < 0n ? -1n : 1n;
    return q;
  };

  it('divRound and divRoundPow10 round half to even as by definition, ties and odd divisors included', () => {
    const n = fc.bigInt({ min: -(10n ** 60n), max: 10n ** 60n });
    fc.assert(
      fc.property(n, fc.bigInt({ min: 1n, max: 10n ** 30n }), (x, d) => {
        expect(divRound(x, d)).toBe(byDefinition(x, d));
        // A tie, its neighbours, and an exact multiple.
        for (const y of [x * d + d / 2n, x * d + d / 2n + 1n, x * d - d / 2n, x * d])
          expect(divRound(y, d)).toBe(byDefinition(y, d));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(n, fc.integer({ min: 0, max: 90 }), (x, k) => {
        const d = 10n ** BigInt(k);
        expect(divRoundPow10(x, k)).toBe(byDefinition(x, d));
        expect(divRoundPow10(x * d + d / 2n, k)).toBe(byDefinition(x * d + d / 2n, d));
      }),
      { numRuns: 2000 },
    );
  });

  it('formats and round-trips', () => {
    expect(formatFixed(parseFixed('1843.12345678'))).toBe('1843.12345678');
    expect(formatFixed(-SCALE / 4n)).toBe('-0.25');
    expect(formatFixed(0n)).toBe('0');
    expect(formatFixed(parseFixed('1.2345675'), 6)).toBe('1.234568');
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), (x) => {
        expect(parseFixed(formatFixed(x))).toBe(x);
      }),
    );
  });

  it('formatScaled is value / 10^decimals exactly: signed, zeros trimmed, read back it is the value', () => {
    expect(formatScaled(300000000000n, 8)).toBe('3000');
    expect(formatScaled(184312345678n, 8)).toBe('1843.12345678');
    expect(formatScaled(1n, 8)).toBe('0.00000001');
    expect(formatScaled(-1n, 8)).toBe('-0.00000001');
    expect(formatScaled(50000000n, 8)).toBe('0.5');
    expect(formatScaled(-50000000n, 8)).toBe('-0.5');
    expect(formatScaled(0n, 8)).toBe('0');
    expect(formatScaled(7n, 0)).toBe('7');
    expect(formatScaled(-7n, 0)).toBe('-7');
    expect(() => formatScaled(1n, -1)).toThrow(RangeError);
    expect(() => formatScaled(1n, 1.5)).toThrow(RangeError);
    // Huge and small values alike (small ones have fewer digits than decimals: "0.000…").
    const value = fc.oneof(
      fc.bigInt({ min: -(10n ** 60n), max: 10n ** 60n }),
      fc.bigInt({ min: -10_000n, max: 10_000n }),
    );
    fc.assert(
      fc.property(value, fc.nat({ max: 40 }), (v, d) => {
        const text = formatScaled(v, d);
        expect(text).toMatch(/^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/);
        const [int, frac = ''] = text.replace('-', '').split('.');
        expect(frac.length).toBeLessThanOrEqual(d);
        const back = BigInt(`${int}${frac.padEnd(d, '0')}`);
        expect(text.startsWith('-') ? -back : back).toBe(v);
      }),
      { numRuns: 2000 },
    );
  });

  it('toNumber rounds to 6 dp', () => {
    expect(fixedToNumber(parseFixed('1.2345665'))).toBe(1.234566);
    expect(fixedToNumber(parseFixed('1.2345675'))).toBe(1.234568);
    expect(fixedToNumber(parseFixed('-3.0000004'))).toBe(-3);
    expect(toMicros(parseFixed('0.0000015'))).toBe(2n);
  });

  it('values raw token amounts exactly', () => {
    // 1.5 WETH at 1843.12345678 = 2764.68518517
    expect(tokenValue(1_500_000_000_000_000_000n, 18, parseFixed('1843.12345678'))).toBe(
      parseFixed('2764.68518517'),
    );
    // 2.5 USDC (6 dp) at 0.9999
    expect(tokenValue(2_500_000n, 6, parseFixed('0.9999'))).toBe(parseFixed('2.49975'));
    // 1 wei at 1843.5 USD = 1.8435e-15 USD → 1843.5 units of 1e-18, half-even → 1844
    expect(tokenValue(1n, 18, parseFixed('1843.5'))).toBe(1844n);
  });

  it('usdToRaw never pays more than asked', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.integer({ min: 0, max: 24 }),
        fc.bigInt({ min: 1n, max: 10n ** 24n }),
        (usd, dec, price) => {
          const raw = usdToRaw(usd, dec, price);
          expect(raw * price).toBeLessThanOrEqual(usd * 10n ** BigInt(dec));
        },
      ),
    );
  });

  it('scaleBy is pro rata', () => {
    expect(scaleBy(100n, 1n, 4n)).toBe(25n);
    expect(scaleBy(10n, 1n, 4n)).toBe(2n);
  });
});
