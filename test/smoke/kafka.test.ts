import { kafkaBrokers, kafkaDescription, uniqueTopic } from '@vault-yield/test-kit';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Smoke test of the real broker the harness resolved: keyed records come back in per-key order.
describe('kafka broker', () => {
  const kafka = new Kafka({ clientId: 'smoke', brokers: kafkaBrokers(), logLevel: logLevel.WARN });
  const admin = kafka.admin();
  const topic = uniqueTopic('smoke');

  beforeAll(async () => {
    console.log(`[smoke] broker: ${kafkaDescription()}`);
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 4 }], waitForLeaders: true });
  });
  afterAll(async () => {
    await admin.deleteTopics({ topics: [topic] }).catch(() => {});
    await admin.disconnect();
  });

  it('produces 1,000 keyed records and consumes them back in per-key order', async () => {
    const keys = Array.from({ length: 10 }, (_, i) => `vault-${i}`);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const messages = Array.from({ length: 1000 }, (_, i) => ({
      key: keys[i % keys.length]!,
      value: JSON.stringify({ key: keys[i % keys.length], seq: Math.floor(i / keys.length) }),
    }));
    await producer.send({ topic, acks: -1, messages });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId: uniqueTopic('smoke-group') });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen = new Map<string, number[]>();
    let total = 0;
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          const { key, seq } = JSON.parse(String(message.value)) as { key: string; seq: number };
          expect(String(message.key)).toBe(key);
          seen.set(key, [...(seen.get(key) ?? []), seq]);
          if (++total === messages.length) resolve();
        },
      });
    });
    await done;
    await consumer.disconnect();

    expect(total).toBe(1000);
    for (const key of keys) expect(seen.get(key)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const { brokers } = await admin.describeCluster();
    expect(brokers.length).toBeGreaterThan(0);
  });
});
