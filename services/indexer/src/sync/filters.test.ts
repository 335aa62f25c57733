import { eventTopics } from '@vault-yield/chain';
import { describe, expect, it } from 'vitest';
import { asTopic, segmentFilters, uniqueLogs } from './filters.js';
import { CHILD_TOPICS } from './types.js';

const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as const;

describe('segmentFilters', () => {
  it('watches vaults, pools and feeds by address while they fit one filter, plus transfers to vaults and from them', () => {
    const f = segmentFilters({
      vaults: [addr(1), addr(2)],
      valuation: [addr(9)],
      tokens: [addr(7)],
      limit: 10,
    });
    expect(f).toEqual([
      { address: [addr(1), addr(2), addr(9)], topic0: CHILD_TOPICS },
      { address: [addr(7)], topic0: [eventTopics.transfer], topic2: [asTopic(addr(1)), asTopic(addr(2))] },
      { address: [addr(7)], topic0: [eventTopics.transfer], topic1: [asTopic(addr(1)), asTopic(addr(2))] },
    ]);
    expect(asTopic(addr(1))).toBe(`0x${'0'.repeat(63)}1`);
  });

  it('past the limit: vault events by topic, valuation by address, recipients in slices of the limit', () => {
    const vaults = Array.from({ length: 5 }, (_, i) => addr(i + 1));
    const f = segmentFilters({ vaults, valuation: [addr(9)], tokens: [addr(7), addr(8)], limit: 2 });
    expect(f[0]).toEqual({ topic0: eventTopics.vault });
    expect(f[1]).toEqual({
      address: [addr(9)],
      topic0: [eventTopics.swap, eventTopics.mint, eventTopics.answerUpdated],
    });
    const transfers = f.slice(2);
    const to = transfers.filter((t) => t.topic2);
    const from = transfers.filter((t) => t.topic1);
    expect(to.length + from.length).toBe(transfers.length);
    expect(to.map((t) => t.topic2!.length)).toEqual([2, 2, 1]);
    expect(to.flatMap((t) => t.topic2)).toEqual(vaults.map(asTopic));
    // senders as recipients: by topic1, in slices of the limit
    expect(from.map((t) => t.topic1!.length)).toEqual([2, 2, 1]);
    expect(from.flatMap((t) => t.topic1)).toEqual(vaults.map(asTopic));
    expect(transfers.every((t) => t.address?.length === 2 && !(t.topic1 && t.topic2))).toBe(true);
    expect(transfers.every((t) => t.topic0.length === 1 && t.topic0[0] === eventTopics.transfer)).toBe(true);
  });

  it('a log two filters answered (a transfer between vaults) is kept once; positions of two block hashes both stay', () => {
    const h = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;
    const l = (block: number, logIndex: number, hash = h(block)) => ({
      blockNumber: BigInt(block),
      blockHash: hash,
      logIndex,
    });
    const none = [l(1, 0), l(1, 1), l(2, 0)];
    expect(uniqueLogs(none)).toBe(none);
    expect(uniqueLogs([l(1, 0), l(1, 1), l(1, 1), l(2, 0), l(2, 0), l(2, 0)])).toEqual([
      l(1, 0),
      l(1, 1),
      l(2, 0),
    ]);
    // a reorg between two answers: both kept, for checkConsistency to refuse the range
    expect(uniqueLogs([l(3, 0), l(3, 0, h(99))])).toEqual([l(3, 0), l(3, 0, h(99))]);
  });

  it('nothing watched: no filter', () => {
    expect(segmentFilters({ vaults: [], valuation: [], tokens: [], limit: 10 })).toEqual([]);
  });
});
