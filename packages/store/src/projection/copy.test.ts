import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CopyWriter, copyText } from './copy.js';

/** What the writer must produce: every field escaped, concatenated, as UTF-8. */
const naive = (fields: (string | Uint8Array)[]) =>
  Buffer.from(
    fields.map((f) => copyText(typeof f === 'string' ? f : Buffer.from(f).toString('utf8'))).join(''),
    'utf8',
  );

describe('CopyWriter', () => {
  it('writes text and byte fields exactly as escaping and concatenating them would, across chunk edges', () => {
    // Text the COPY format must escape, non-ASCII, and sizes around and above the 256 KiB chunk.
    const piece = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 40 }),
      fc.constantFrom('\\', '\t', '\n', '\r', 'é', '✓', '\\N'),
      fc.integer({ min: 1, max: 300 * 1024 }).map((n) => 'x'.repeat(n)),
    );
    const field = fc.tuple(fc.array(piece, { maxLength: 6 }), fc.boolean()).map(([parts, asBytes]) => {
      const s = parts.join('');
      return asBytes ? Buffer.from(s, 'utf8') : s;
    });
    fc.assert(
      fc.property(fc.array(field, { maxLength: 30 }), (fields) => {
        const w = new CopyWriter();
        for (const f of fields) {
          if (typeof f === 'string') w.text(copyText(f));
          else w.bytes(f);
        }
        w.flush();
        expect(Buffer.concat(w.chunks).equals(naive(fields))).toBe(true);
        for (const c of w.chunks) expect(c.length).toBeGreaterThan(0);
      }),
      { numRuns: 60 },
    );
  });

  it('passes bytes without escapes through untouched and escapes the four COPY bytes', () => {
    const w = new CopyWriter();
    w.bytes(Buffer.from('{"a":"b"}'));
    w.bytes(Buffer.from('{"a":"\\"q\\""}\t\n\r'));
    w.flush();
    expect(Buffer.concat(w.chunks).toString('utf8')).toBe('{"a":"b"}{"a":"\\\\"q\\\\""}\\t\\n\\r');
  });

  it('writes bytes that are not valid UTF-8 as the decoder reads them (U+FFFD), never as they are', () => {
    const w = new CopyWriter();
    const bad = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xc3]), Buffer.from('"}')]);
    w.bytes(bad);
    w.flush();
    const out = Buffer.concat(w.chunks);
    expect(out.equals(Buffer.from(bad.toString('utf8'), 'utf8'))).toBe(true);
    expect(out.toString('utf8')).toBe('{"a":"\uFFFD\uFFFD"}');
  });
});
