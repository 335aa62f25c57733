import fc from 'fast-check';
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { KeyCachedPartitioner, PartitionCountChangedError } from './partitioner.js';

const metadata = (n: number): PartitionMetadata[] =>
  Array.from({ length: n }, (_, i) => ({
    partitionErrorCode: 0,
    partitionId: i,
    leader: 0,
    replicas: [0],
    isr: [0],
    offlineReplicas: [],
  }));

describe('KeyCachedPartitioner', () => {
  it('puts every keyed message where the default (Java-compatible) partitioner does, across topics and partition counts', () => {
    const message = fc.record({
      topic: fc.constantFrom('a', 'b'),
      key: fc.oneof(fc.constantFrom('0xabc', '0xdef', 'vault'), fc.string({ maxLength: 42 })),
    });
    const counts = fc.record({ a: fc.integer({ min: 1, max: 12 }), b: fc.integer({ min: 1, max: 12 }) });
    fc.assert(
      fc.property(counts, fc.array(message, { minLength: 1, maxLength: 200 }), (n, messages) => {
        const cached = KeyCachedPartitioner();
        const reference = Partitioners.DefaultPartitioner();
        for (const m of messages) {
          const args = {
            topic: m.topic,
            partitionMetadata: metadata(n[m.topic]),
            message: { key: m.key, value: null },
          };
          expect(cached(args)).toBe(reference(args));
        }
      }),
    );
  });

  it("refuses to go on when the topic's partition count changes under it, naming the way out", () => {
    const cached = KeyCachedPartitioner();
    const send = (n: number, topic = 'log') =>
      cached({ topic, partitionMetadata: metadata(n), message: { key: '0xabc', value: null } });
    send(4);
    send(4);
    send(8, 'other'); // another topic has its own count
    expect(() => send(8)).toThrow(PartitionCountChangedError);
    expect(() => send(8)).toThrow(
      /topic log went from 4 to 8 partitions.*reindex --topic NEW --partitions 8/,
    );
  });

  it('leaves an explicit partition and Buffer keys to the default', () => {
    const cached = KeyCachedPartitioner();
    const reference = Partitioners.DefaultPartitioner();
    const at = {
      topic: 't',
      partitionMetadata: metadata(8),
      message: { key: 'k', value: null, partition: 5 },
    };
    expect(cached(at)).toBe(5);
    const buf = {
      topic: 't',
      partitionMetadata: metadata(8),
      message: { key: Buffer.from('k'), value: null },
    };
    expect(cached(buf)).toBe(reference(buf));
  });
});
