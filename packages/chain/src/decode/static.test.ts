import fc from 'fast-check';
import type { Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  answerUpdatedEventAbi,
  eventTopics,
  factoryEventsAbi,
  swapEventAbi,
  vaultEventsAbi,
} from '../events/index.js';
import { decodeLog, decodeLogReference, type RawLog } from './index.js';
import { WORD_EDGES } from './word-edges.js';

/**
 * The static fast path of decodeLog must give exactly what viem's generic decoder gives (the
 * reference): the same record or market event, or the same failure with the same reason — for
 * well-formed logs of every event and for malformed ones (odd or short data, bad digits, wrong
 * topic counts, words out of their type's range).
 */

const events = [...factoryEventsAbi, ...vaultEventsAbi, swapEventAbi, answerUpdatedEventAbi];
const topicOf = new Map<string, Hex>();
{
  const all = [...eventTopics.factory, ...eventTopics.vault, eventTopics.swap, eventTopics.answerUpdated];
  for (const [i, e] of events.entries()) topicOf.set(e.name, all[i]!);
}

const hexChars = (n: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: n, maxLength: n });
const pad = (h: string) => h.padStart(64, '0');
const twos = (v: bigint) => (v < 0n ? (1n << 256n) + v : v).toString(16).padStart(64, '0');
/** One ABI word: the kinds a real log holds, and the odd ones a broken contract might emit. */
const word = fc.oneof(
  hexChars(64),
  hexChars(40).map(pad),
  fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }).map((v) => pad(v.toString(16))),
  fc.integer({ min: -887272, max: 887272 }).map((v) => twos(BigInt(v))),
  fc.bigInt({ min: -(1n << 200n), max: 1n << 200n }).map(twos),
  fc.constant('0'.repeat(64)),
  fc
    .string({ unit: fc.constantFrom(...'abcxyz-_ 0129'), minLength: 1, maxLength: 32 })
    .map((t) => Buffer.from(t, 'ascii').toString('hex').padEnd(64, '0')),
  hexChars(64).map((h) => h.toUpperCase()),
  // The edges of the decoder's number paths: 2^53, 2^63, 2^64, int64 and a sign past them.
  fc.constantFrom(...WORD_EDGES).map(twos),
  fc
    .bigInt({ min: 0n, max: (1n << 64n) - 1n })
    .map((v) => `${'f'.repeat(48)}${v.toString(16).padStart(16, '0')}`),
);

const position = {
  blockNumber: 12n,
  blockHash: `0x${'ab'.repeat(32)}` as Hex,
  transactionHash: `0x${'cd'.repeat(32)}` as Hex,
  transactionIndex: 3,
  logIndex: 7,
  removed: false,
};

const wellShaped = fc
  .constantFrom(...events)
  .chain((event) => {
    const indexed = event.inputs.filter((i) => (i as { indexed?: boolean }).indexed).length;
    const data = event.inputs.length - indexed;
    return fc.record({
      event: fc.constant(event),
      topics: fc.array(word, { minLength: indexed, maxLength: indexed }),
      data: fc.array(word, { minLength: data, maxLength: data }),
      address: hexChars(40),
    });
  })
  .map(
    ({ event, topics, data, address }): RawLog => ({
      ...position,
      address: `0x${address}`,
      topics: [topicOf.get(event.name)!, ...topics.map((t) => `0x${t}` as Hex)],
      data: `0x${data.join('')}`,
    }),
  );

/** One change to a well-shaped log. */
const mutated = fc.tuple(wellShaped, fc.nat(), fc.nat({ max: 7 })).map(([log, n, kind]): RawLog => {
  const body = log.data.slice(2);
  switch (kind) {
    case 0: // truncated
      return { ...log, data: `0x${body.slice(0, n % (body.length + 1))}` };
    case 1: // extra data
      return { ...log, data: `0x${body}${'0f'.repeat((n % 40) + 1)}` };
    case 2: // odd length
      return { ...log, data: `0x${body}${n % 16}` };
    case 3: {
      // a non-hex digit
      if (body.length === 0) return { ...log, data: '0xzz' };
      const i = n % body.length;
      return { ...log, data: `0x${body.slice(0, i)}g${body.slice(i + 1)}` };
    }
    case 4: // a topic too many
      return { ...log, topics: [...log.topics, `0x${'11'.repeat(32)}`] as RawLog['topics'] };
    case 5: // a topic too few
      return log.topics.length > 1 ? { ...log, topics: log.topics.slice(0, -1) as RawLog['topics'] } : log;
    case 6: {
      // a short topic
      if (log.topics.length < 2) return { ...log, data: '0x' };
      const topics = [...log.topics];
      topics[1] = `0x${topics[1]!.slice(2 + (n % 64))}` as Hex;
      return { ...log, topics: topics as RawLog['topics'] };
    }
    default: // empty data
      return { ...log, data: '0x' };
  }
});

describe('static ABI fast path', () => {
  it('decodes well-shaped logs of every event exactly as viem does', () => {
    fc.assert(
      fc.property(wellShaped, (log) => {
        expect(decodeLog(log)).toEqual(decodeLogReference(log));
      }),
      { numRuns: 3000 },
    );
  });

  it('fails malformed logs exactly as viem does, with the same reason', () => {
    fc.assert(
      fc.property(mutated, (log) => {
        expect(decodeLog(log)).toEqual(decodeLogReference(log));
      }),
      { numRuns: 3000 },
    );
  });

  it('covers both outcomes (the generators reach valid records and failures)', () => {
    const outcomes = fc
      .sample(fc.oneof(wellShaped, mutated), { numRuns: 2000, seed: 7 })
      .map((l) => decodeLog(l));
    expect(outcomes.filter((r) => r.ok && r.kind === 'record').length).toBeGreaterThan(100);
    expect(outcomes.filter((r) => r.ok && r.kind === 'watched').length).toBeGreaterThan(10);
    expect(outcomes.filter((r) => !r.ok).length).toBeGreaterThan(100);
  });

  it('fails a market log whose address is not an address (checked by format, not by checksum)', () => {
    // Swap(sender, recipient indexed; amount0, amount1, sqrtPriceX96, liquidity, tick)
    const swap: RawLog = {
      ...position,
      address: `0x${'12'.repeat(20)}`,
      topics: [eventTopics.swap, `0x${pad('aa'.repeat(20))}`, `0x${pad('bb'.repeat(20))}`],
      data: `0x${[pad('5'), twos(-7n), pad((1n << 96n).toString(16)), pad('64'), twos(-3n)].join('')}`,
    };
    const ok = decodeLog(swap);
    expect(ok).toMatchObject({ ok: true, kind: 'watched', event: { pool: swap.address.toLowerCase() } });
    // Mixed case is an address whatever its checksum; a short or non-hex one is not.
    const mixed = `0x${'aB'.repeat(20)}` as Hex;
    expect(decodeLog({ ...swap, address: mixed })).toMatchObject({
      ok: true,
      event: { pool: mixed.toLowerCase() },
    });
    for (const address of [`0x${'ab'.repeat(19)}`, `0x${'zz'.repeat(20)}`] as Hex[]) {
      const r = decodeLog({ ...swap, address });
      expect(r).toMatchObject({ ok: false });
      expect(!r.ok && r.reason).toMatch(/is not an address/);
    }
  });
});
