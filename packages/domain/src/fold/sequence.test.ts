import { describe, expect, it } from 'vitest';
import { checkSeq, nextSeqPosition, voidedBy } from './sequence.js';

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

  it('a revert of a vault born in the orphaned blocks leaves no state: what it held from those blocks is void, a canonical creation starts at 1', () => {
    const h = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;
    // Born at block 100 (orphaned hashes 0xa…, 0xb…); its record 3 was lost, 4..6 held.
    const voided = voidedBy({ fromBlock: 100, orphanedBlockHashes: [h(0xa), h(0xb)] });
    expect(voided({ blockNumber: 100, blockHash: h(0xa) })).toBe(true);
    expect(voided({ blockNumber: 101, blockHash: h(0xb) })).toBe(true);
    // The canonical block of the same number, and an orphaned hash below the window: kept.
    expect(voided({ blockNumber: 100, blockHash: h(0xc) })).toBe(false);
    expect(voided({ blockNumber: 99, blockHash: h(0xa) })).toBe(false);
    // After the revert the vault has no state and no number: a held record of the orphaned
    // blocks could never follow (it would hold the vault forever) — hence void — while the
    // canonical chain's creation, numbered from 1 again, applies.
    const gone = { lastSeq: null, hasState: false };
    expect(checkSeq(gone, rec(4))).toBe('gap');
    expect(checkSeq(gone, rec(1, 'vault.created'))).toBe('apply');
  });
});
