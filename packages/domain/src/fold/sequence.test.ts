import { describe, expect, it } from 'vitest';
import { checkSeq, nextSeqPosition } from './sequence.js';

const rec = (seq: number | undefined, type = 'deposit', payload: object = {}) =>
  ({ seq, type, payload }) as Parameters<typeof checkSeq>[1];
const revert = (seq: number, fromSeq?: number) =>
  rec(seq, 'revert', { fromBlock: 1, orphanedBlockHashes: [], ...(fromSeq ? { fromSeq } : {}) });

describe('checkSeq', () => {
  it('folds the next number, skips numbers folded, holds at a gap', () => {
    const at = { lastSeq: 5, hasState: true };
    expect(checkSeq(at, rec(6))).toBe('apply');
    expect(checkSeq(at, rec(5))).toBe('duplicate');
    expect(checkSeq(at, rec(1))).toBe('duplicate');
    expect(checkSeq(at, rec(7))).toBe('gap');
    expect(checkSeq(at, rec(100))).toBe('gap');
  });

  it('a new vault starts at 1', () => {
    const at = { lastSeq: null, hasState: false };
    expect(checkSeq(at, rec(1, 'vault.created'))).toBe('apply');
    expect(checkSeq(at, rec(2))).toBe('gap');
  });

  it('unsequenced (schema 2) records are applied unchecked; the first number after them is the baseline', () => {
    expect(checkSeq({ lastSeq: 9, hasState: true }, rec(undefined))).toBe('apply');
    expect(checkSeq({ lastSeq: null, hasState: true }, rec(40))).toBe('apply');
    expect(nextSeqPosition({ lastSeq: null, hasState: true }, rec(40))).toBe(40);
    expect(nextSeqPosition({ lastSeq: 9, hasState: true }, rec(undefined))).toBe(9);
  });

  it('a revert needs only the numbers before the orphaned blocks, and is never a gap for what it voids', () => {
    // Orphaned records 11..13 were folded: the revert takes 14.
    expect(checkSeq({ lastSeq: 13, hasState: true }, revert(14, 11))).toBe('apply');
    // 12 and 13 were never published (a crash before the publish): still exact.
    expect(checkSeq({ lastSeq: 11, hasState: true }, revert(14, 11))).toBe('apply');
    expect(checkSeq({ lastSeq: 10, hasState: true }, revert(14, 11))).toBe('apply');
    // A record before the orphaned blocks is missing: hold.
    expect(checkSeq({ lastSeq: 9, hasState: true }, revert(14, 11))).toBe('gap');
    // Republished revert.
    expect(checkSeq({ lastSeq: 14, hasState: true }, revert(14, 11))).toBe('duplicate');
    // Canonical records continue after the revert's number.
    expect(nextSeqPosition({ lastSeq: 11, hasState: true }, revert(14, 11))).toBe(14);
    expect(checkSeq({ lastSeq: 14, hasState: true }, rec(15))).toBe('apply');
  });
});
