import { type BlockHeader, bloomOf, type IndexerLog, type LogFilter } from '@vault-yield/chain';
import { describe, expect, it } from 'vitest';
import { InconsistentRangeError } from '../errors.js';
import {
  completeByBloom,
  missingChunkLogs,
  recheckByBloom,
  type ShortAnswers,
  unansweredBlocks,
} from './bloom.js';

type Hex = `0x${string}`;
const ours = '0x00000000000000000000000000000000000000aa' as Hex;
const theirs = '0x00000000000000000000000000000000000000bb' as Hex;
const topic = `0x${'11'.repeat(32)}` as Hex;
const filter: LogFilter = { address: [ours], topic0: [topic] };
const log = (block: number, address: Hex): IndexerLog => ({
  address,
  topics: [topic],
  data: '0x',
  blockNumber: BigInt(block),
  blockHash: `0x${block.toString(16).padStart(64, '0')}`,
  blockTimestamp: block,
  transactionHash: `0x${'cc'.repeat(32)}`,
  transactionIndex: 0,
  logIndex: 0,
  removed: false,
});
/** Blocks 10..14: ours has a log in 11 and 13, another contract in 12; 14 has no bloom. */
const headers = new Map<number, BlockHeader>(
  [10, 11, 12, 13, 14].map((n) => [
    n,
    {
      number: n,
      hash: `0x${n.toString(16).padStart(64, '0')}`,
      parentHash: `0x${(n - 1).toString(16).padStart(64, '0')}`,
      timestamp: n,
      logsBloom:
        n === 14
          ? undefined
          : bloomOf(n === 11 || n === 13 ? [log(n, ours)] : n === 12 ? [log(n, theirs)] : []),
    },
  ]),
);

describe('logs a node behind the head left out', () => {
  it('names the blocks whose bloom may match but that came back without logs', () => {
    expect(unansweredBlocks(filter, [log(11, ours), log(13, ours)], headers, 10, 14)).toEqual([]);
    // The answer stopped at 11 (a node whose head is 12): 13 is asked again; 12 is not ours.
    expect(unansweredBlocks(filter, [log(11, ours)], headers, 10, 14).map((h) => h.number)).toEqual([13]);
    expect(unansweredBlocks(filter, [], headers, 12, 14)).toHaveLength(1);
  });

  it('asks those blocks again by hash and returns what was missing', async () => {
    const asked: string[] = [];
    const r = await recheckByBloom([{ filter, logs: [] }], headers, 10, 14, async (_f, h) => {
      asked.push(h);
      return [log(Number(BigInt(h)), ours)];
    });
    expect(asked).toHaveLength(2);
    expect(r.asked).toBe(2);
    expect(r.missing[0]!.map((l) => Number(l.blockNumber))).toEqual([11, 13]);
  });

  it('completes a short answer in block order; a short factory scan fails the chunk', async () => {
    let short = 0;
    const d: ShortAnswers = {
      byHash: async (_f, h) => [log(Number(BigInt(h)), ours)],
      log: { warn: () => {}, debug: () => {} } as unknown as ShortAnswers['log'],
      onShort: () => short++,
    };
    const done = await completeByBloom(filter, [log(11, ours)], headers, 10, 14, d);
    expect(done.map((l) => Number(l.blockNumber))).toEqual([11, 13]);
    expect(short).toBe(1);
    const other: LogFilter = { address: [theirs], topic0: [topic] };
    // The chunk's own filter answered whole; the factory's (here: `filter`) left out 13.
    const got = await missingChunkLogs(
      { from: 10, to: 14, filters: [other], lists: [[log(12, theirs)]] },
      { filter, logs: [log(11, ours)] },
      headers,
      d,
    ).catch((e: unknown) => e);
    expect(got).toBeInstanceOf(InconsistentRangeError);
  });
});
