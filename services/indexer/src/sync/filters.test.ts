import { eventTopics } from '@vault-yield/chain';
import { describe, expect, it } from 'vitest';
import { asTopic, segmentFilters } from './filters.js';
import { CHILD_TOPICS } from './types.js';

const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as const;

describe('segmentFilters', () => {
  it('watches vaults, pools and feeds by address while they fit one filter, plus transfers to vaults', () => {
    const f = segmentFilters({
      vaults: [addr(1), addr(2)],
      valuation: [addr(9)],
      tokens: [addr(7)],
      limit: 10,
    });
    expect(f).toEqual([
      { address: [addr(1), addr(2), addr(9)], topic0: CHILD_TOPICS },
      { address: [addr(7)], topic0: [eventTopics.transfer], topic2: [asTopic(addr(1)), asTopic(addr(2))] },
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
    expect(transfers.map((t) => t.topic2?.length)).toEqual([2, 2, 1]);
    expect(transfers.flatMap((t) => t.topic2)).toEqual(vaults.map(asTopic));
    expect(transfers.every((t) => t.address?.length === 2)).toBe(true);
  });

  it('nothing watched: no filter', () => {
    expect(segmentFilters({ vaults: [], valuation: [], tokens: [], limit: 10 })).toEqual([]);
  });
});
