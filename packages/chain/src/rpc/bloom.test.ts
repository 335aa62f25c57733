import type { Address, Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { bloomMayMatch, bloomOf, compileBloomFilter } from './bloom.js';

// A block anvil (1.7.1) mined holding one log: LOG3 from a contract's constructor.
const real = {
  address: '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512' as Address,
  topics: [
    '0xababababababababababababababababcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd',
    '0x1111111111111111111111111111111111111111111111111111111111111111',
    '0x0000000000000000000000009965507d1a55bcc2695c58ba16fb37d819b0a4dc',
  ] as Hex[],
  bloom: `0x${[
    '0000000400000000000000000000000000000000000000000000200000000000',
    '0000000000000000000000000000000010000000000000000000000000000000',
    '0000001000000000000000000000000000000200000080000000000000000000',
    '0000000000000000000000000000000000000000000000000000000000000000',
    '8000000000000000000000000000000000000000000000000000000000000000',
    '0000000000000000000001000000000000000000000000000000000020000000',
    '0000000080000000000000000000100000000000000000000000000000000000',
    '0000000000000000000000000000000000000000000000800000000000000000',
  ].join('')}` as Hex,
};

const other = '0x5fbdb2315678afecb367f032d93f642f64180aa3' as Address;
const otherTopic = `0x${'22'.repeat(32)}` as Hex;

describe('logsBloom', () => {
  it("builds a node's bloom bit for bit", () => {
    expect(bloomOf([real])).toBe(real.bloom);
  });

  it('says "may" for a filter the block matches, and "no" where the bloom proves none', () => {
    const [t0, t1, t2] = real.topics as [Hex, Hex, Hex];
    const may = (f: Parameters<typeof compileBloomFilter>[0]) =>
      bloomMayMatch(real.bloom, compileBloomFilter(f));
    expect(may({ address: [real.address], topic0: [t0] })).toBe(true);
    expect(may({ address: [other, real.address], topic0: [otherTopic, t0], topic2: [t2] })).toBe(true);
    expect(may({ topic0: [t0] })).toBe(true);
    expect(may({ address: [other], topic0: [t0] })).toBe(false);
    expect(may({ address: [real.address], topic0: [otherTopic] })).toBe(false);
    expect(may({ address: [real.address], topic0: [t0], topic2: [otherTopic] })).toBe(false);
    // topic1 (a Transfer's sender) is a position of its own
    expect(may({ address: [real.address], topic0: [t0], topic1: [otherTopic, t1] })).toBe(true);
    expect(may({ address: [real.address], topic0: [t0], topic1: [otherTopic] })).toBe(false);
    expect(may({ address: [real.address], topic0: [t0], topic1: [t2] })).toBe(true); // t2 is in the bloom too: a bloom knows no positions
    // Anything that is not a 2048-bit bloom proves nothing.
    expect(bloomMayMatch('0x00', compileBloomFilter({ address: [other], topic0: [otherTopic] }))).toBe(true);
  });
});
