import { describe, expect, it } from 'vitest';
import { duration, pct } from './dom.js';

describe('dashboard formatters', () => {
  it('pct: a fraction as a percentage, 2 decimals', () => {
    expect(pct(0.184321)).toBe('18.43%');
    expect(pct(0)).toBe('0.00%');
    expect(pct(1)).toBe('100.00%');
  });

  it('duration: the two largest units of a span, rounded down to the second', () => {
    const s = 1000;
    expect(duration(0)).toBe('0 s');
    expect(duration(42 * s + 999)).toBe('42 s');
    expect(duration(61 * s)).toBe('1 min 1 s');
    expect(duration(5 * 3600 * s + 12 * 60 * s + 59 * s)).toBe('5 h 12 min');
    expect(duration(32 * 3600 * s)).toBe('1 d 8 h');
    expect(duration(400 * 86_400 * s + 3600 * s)).toBe('400 d 1 h');
  });
});
