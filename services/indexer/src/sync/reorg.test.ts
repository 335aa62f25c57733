import type { BlockHeader } from '@vault-yield/chain';
import type { StoredBlock } from '@vault-yield/store';
import { describe, expect, it } from 'vitest';
import { ReorgTooDeepError } from '../errors.js';
import { planReorg } from './reorg.js';

type Hash = `0x${string}`;
const hash = (n: number, fork = 0) =>
  `0x${n.toString(16).padStart(8, '0')}${String(fork).repeat(56)}` as Hash;
const kept = (from: number, to: number): StoredBlock[] =>
  Array.from({ length: to - from + 1 }, (_, i) => ({
    blockNumber: from + i,
    blockHash: hash(from + i),
    parentHash: hash(from + i - 1),
    blockTimestamp: from + i,
    vaults: from + i === to ? ['0xv'] : [],
  }));
/** The node's headers: the kept chain up to `same`, a fork `fork` above it up to `head`. */
const chain = (same: number, head: number, from = 0, fork = 1) => {
  const m = new Map<number, BlockHeader>();
  for (let n = from; n <= head; n++)
    m.set(n, {
      number: n,
      hash: n <= same ? hash(n) : hash(n, fork),
      parentHash: n - 1 <= same ? hash(n - 1) : hash(n - 1, fork),
      timestamp: n,
    });
  return m;
};

describe('planReorg', () => {
  it('finds the common ancestor of a reorg of the same length', () => {
    const plan = planReorg(kept(10, 20), chain(17, 20), 16)!;
    expect(plan.ancestor.blockNumber).toBe(17);
    expect(plan.orphaned.map((b) => b.blockNumber)).toEqual([18, 19, 20]);
  });

  it('takes blocks missing from a shorter chain as orphaned once a lower block is proven replaced', () => {
    // Rolled back to 15, two new blocks mined: 16, 17 replaced, 18..20 gone.
    const plan = planReorg(kept(10, 20), chain(15, 17), 16)!;
    expect(plan.ancestor.blockNumber).toBe(15);
    expect(plan.orphaned.map((b) => b.blockNumber)).toEqual([16, 17, 18, 19, 20]);
    expect(plan.depth).toBe(5);
  });

  it('does not take missing headers alone for a reorg (a node behind the head, or a cut not yet replaced)', () => {
    expect(planReorg(kept(10, 20), chain(20, 17), 16)).toBeNull();
    expect(planReorg(kept(10, 20), new Map(), 16)).toBeNull();
  });

  it('halts on a reorg deeper than the window, saying how to recover', () => {
    expect(() => planReorg(kept(10, 20), chain(5, 22), 11)).toThrow(ReorgTooDeepError);
    expect(() => planReorg(kept(10, 20), chain(5, 22), 11)).toThrow(/vault-yield reindex --topic/);
  });
});
