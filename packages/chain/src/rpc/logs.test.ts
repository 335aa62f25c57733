import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChainClient } from '../client/index.js';
import { getLogsOnce, type LogFilter, quantity } from './logs.js';

describe('quantity (a log position read without BigInt)', () => {
  it('is Number(BigInt(h)) for every hex quantity, small or past 2^53', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 80n) - 1n }), fc.boolean(), (v, upper) => {
        const digits = v.toString(16);
        const h = `0x${upper ? digits.toUpperCase() : digits}`;
        expect(quantity(h)).toBe(Number(BigInt(h)));
      }),
    );
  });

  it('refuses what is no quantity, as BigInt does', () => {
    for (const h of ['0x', '0xzz', '0x1.5', '1e3', '0x1g']) expect(() => quantity(h)).toThrow(SyntaxError);
  });
});

describe('eth_getLogs topics', () => {
  const t = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;
  async function paramsOf(filter: LogFilter): Promise<Record<string, unknown>> {
    let sent: { params: [Record<string, unknown>] } | undefined;
    const client = {
      request: async (args: { params: [Record<string, unknown>] }) => {
        sent = args;
        return [];
      },
    } as unknown as ChainClient;
    await getLogsOnce(client, filter, 1, 2);
    return sent!.params[0];
  }

  it('puts topic1 and topic2 at their positions, null for one not filtered', async () => {
    expect((await paramsOf({ topic0: [t(1)] })).topics).toEqual([t(1)]);
    expect((await paramsOf({ topic0: [t(1)], topic2: [t(3)] })).topics).toEqual([t(1), null, [t(3)]]);
    expect((await paramsOf({ topic0: [t(1)], topic1: [t(2), t(4)] })).topics).toEqual([t(1), [t(2), t(4)]]);
    expect((await paramsOf({ topic0: [t(1), t(5)], topic1: [t(2)], topic2: [t(3)] })).topics).toEqual([
      [t(1), t(5)],
      [t(2)],
      [t(3)],
    ]);
  });
});
