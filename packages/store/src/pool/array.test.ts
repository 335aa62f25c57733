import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pgArray, pgArrayOf } from './array.js';

/** Parses an array literal as Postgres does for one dimension: elements (null for NULL). */
function parse(literal: string): (string | null)[] {
  expect(literal.startsWith('{') && literal.endsWith('}')).toBe(true);
  const body = literal.slice(1, -1);
  const out: (string | null)[] = [];
  if (body === '') return out;
  let i = 0;
  while (i <= body.length) {
    if (body[i] === '"') {
      let v = '';
      i++;
      while (body[i] !== '"') {
        if (body[i] === '\\') i++;
        v += body[i++];
      }
      i++;
      out.push(v);
    } else {
      let j = i;
      while (j < body.length && body[j] !== ',') j++;
      const raw = body.slice(i, j);
      out.push(raw.toUpperCase() === 'NULL' ? null : raw);
      i = j;
    }
    i++; // the comma
  }
  return out;
}

describe('pgArray', () => {
  it('writes hex, numbers, booleans and nulls bare', () => {
    expect(pgArray(['0xab', 12, 9007199254740993n, true, false, null, undefined])).toBe(
      '{0xab,12,9007199254740993,t,f,NULL,NULL}',
    );
    expect(pgArray([])).toBe('{}');
  });

  it('quotes what the array syntax needs quoted, and only that', () => {
    expect(pgArray(['', 'null', 'NuLl', 'a b', 'a,b', '{x}', 'q"', 'b\\s', 'nulls'])).toBe(
      '{"","null","NuLl","a b","a,b","{x}","q\\"","b\\\\s",nulls}',
    );
  });

  it('pgArrayOf maps without changing the literal', () => {
    const rows = [
      { v: '0x1', n: 3 },
      { v: 'x y', n: 4 },
    ];
    expect(pgArrayOf(rows, (r) => r.v)).toBe(pgArray(['0x1', 'x y']));
    expect(pgArrayOf(rows, (r) => r.n)).toBe('{3,4}');
  });

  it('reads back as the elements it was given, for any text', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.string({ unit: 'grapheme' }), { nil: null })), (values) => {
        expect(parse(pgArray(values))).toEqual(values);
      }),
    );
  });
});
