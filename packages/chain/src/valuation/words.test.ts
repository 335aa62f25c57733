import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WORD_EDGES } from '../decode/word-edges.js';
import { BlockValuationError } from './errors.js';
import { Words } from './words.js';

const TWO_256 = 1n << 256n;
const word = (v: bigint) => ((v % TWO_256) + TWO_256) % TWO_256;
const hexOf = (values: readonly bigint[]) =>
  `0x${values.map((v) => word(v).toString(16).padStart(64, '0')).join('')}` as const;

/** Values around every fast path's edges: 0, 2^53, 2^64, 2^192, int32 and int256 signs. */
const interesting = fc.oneof(
  fc.bigInt({ min: 0n, max: TWO_256 - 1n }),
  fc.bigInt({ min: -(1n << 40n), max: 1n << 40n }),
  fc.constantFrom(...WORD_EDGES),
  fc.bigInt({ min: -(1n << 255n), max: (1n << 255n) - 1n }),
);

describe('Words (the lens answer)', () => {
  it('reads every word as BigInt of its hex does: unsigned, signed, int and address', () => {
    fc.assert(
      fc.property(fc.array(interesting, { minLength: 1, maxLength: 8 }), fc.boolean(), (values, upper) => {
        const hex = hexOf(values);
        const text = (upper ? hex.toUpperCase().replace('0X', '0x') : hex) as `0x${string}`;
        const [u, s, n, a] = [new Words(text), new Words(text), new Words(text), new Words(text)];
        for (let i = 0; i < values.length; i++) {
          const w = BigInt(`0x${hex.slice(2 + 64 * i, 66 + 64 * i)}`);
          expect(u.next()).toBe(w);
          expect(s.signed()).toBe(BigInt.asIntN(256, w));
          expect(n.int()).toBe(Number(BigInt.asIntN(256, w)));
          expect(a.address()).toBe(`0x${hex.slice(2 + 64 * i + 24, 66 + 64 * i)}`);
        }
        for (const r of [u, s, n, a]) expect(r.done).toBe(true);
        expect(() => u.next()).toThrow(BlockValuationError);
        expect(() => s.signed()).toThrow(BlockValuationError);
        expect(() => n.int()).toThrow(BlockValuationError);
      }),
    );
  });

  it('refuses an answer that is no array of words: a part word, a bad digit, no 0x', () => {
    const good = hexOf([5n, 7n]);
    expect(new Words('0x').done).toBe(true);
    expect(() => new Words(good.slice(0, -2) as `0x${string}`)).toThrow(/no array of 32-byte words/);
    expect(() => new Words(`${good.slice(0, 70)}g${good.slice(71)}` as `0x${string}`)).toThrow(
      BlockValuationError,
    );
    expect(() => new Words(good.slice(2) as `0x${string}`)).toThrow(BlockValuationError);
  });
});
