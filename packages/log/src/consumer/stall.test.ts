import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { consumerStalled } from './index.js';

describe('consumerStalled', () => {
  it('is stalled only with no batch in hand and no sign of life for longer than the timeout', () => {
    const at = { now: 100_000, stallTimeoutMs: 60_000 };
    expect(consumerStalled({ ...at, lastSign: 39_999, batchesInHand: 0 })).toBe(true);
    expect(consumerStalled({ ...at, lastSign: 40_000, batchesInHand: 0 })).toBe(false);
    // A batch in hand is the handler's time, however long: never a stall of the consumer.
    expect(consumerStalled({ ...at, lastSign: 0, batchesInHand: 1 })).toBe(false);
  });

  it('agrees with its rule for any figures', () => {
    fc.assert(
      fc.property(
        fc.nat(10_000_000),
        fc.nat(10_000_000),
        fc.nat(4),
        fc.integer({ min: 1, max: 600_000 }),
        (now, lastSign, batchesInHand, stallTimeoutMs) =>
          consumerStalled({ now, lastSign, batchesInHand, stallTimeoutMs }) ===
          (batchesInHand === 0 && now - lastSign > stallTimeoutMs),
      ),
    );
  });
});
