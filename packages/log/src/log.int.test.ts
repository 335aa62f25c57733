import { randomBytes } from 'node:crypto';
import { decodeRecord } from '@vault-yield/domain';
import { kafkaBrokers, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import {
  Kafka,
  KafkaJSConnectionError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  logLevel,
} from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { leaderUnavailable } from './admin/index.js';
import {
  type BatchConsumer,
  createBatchConsumer,
  createLogAdmin,
  createPublisher,
  type LogBatch,
  LogSettingsError,
  retentionProblems,
} from './index.js';

const brokers = () => kafkaBrokers();
const consumers: BatchConsumer[] = [];
afterAll(async () => {
  for (const c of consumers) await c.stop().catch(() => {});
});

async function topicWith(partitions: number, messages: { key: string; value: string }[]): Promise<string> {
  const topic = uniqueTopic('log');
  const admin = await createLogAdmin({ brokers: brokers(), clientId: 'log-test' });
  await admin.ensureTopic({ topic, partitions });
  await admin.close();
  const publisher = await createPublisher({ brokers: brokers(), clientId: 'log-test', topic });
  await publisher.publishRaw(messages.map((m) => ({ key: m.key, value: Buffer.from(m.value) })));
  await publisher.close();
  return topic;
}

/** A consumer whose "projection" is an in-memory offset map, as the projector keeps it in Postgres. */
function memoryConsumer(
  topic: string,
  stored: Map<number, string>,
  onBatch: (b: LogBatch<string>) => 'apply' | { seekTo: string },
  more: Partial<Pick<Parameters<typeof createBatchConsumer<string>>[0], 'onReplace'>> = {},
) {
  const groupId = `g-${randomBytes(4).toString('hex')}`;
  const consumer = createBatchConsumer<string>({
    brokers: brokers(),
    clientId: 'log-test',
    groupId,
    topic,
    decode: (v) => v?.toString('utf8') ?? '',
    storedOffsets: async (_t, partitions) =>
      new Map(partitions.filter((p) => stored.has(p)).map((p) => [p, stored.get(p) as string])),
    handleBatch: async (batch) => {
      const what = onBatch(batch);
      if (what !== 'apply') return what;
      stored.set(batch.partition, batch.commit.nextOffset);
      return { applied: true };
    },
    minBytes: 1,
    maxWaitTimeMs: 100,
    sessionTimeoutMs: 6000,
    ...more,
  });
  consumers.push(consumer);
  return { consumer, groupId };
}

async function until(pred: () => boolean, ms = 30_000) {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('log admin', () => {
  it('creates topics that keep records forever, idempotently', async () => {
    const topic = uniqueTopic('log-admin');
    const admin = await createLogAdmin({ brokers: brokers(), clientId: 'log-test' });
    try {
      expect(await admin.ensureTopic({ topic, partitions: 3 })).toBe(true);
      expect(await admin.ensureTopic({ topic, partitions: 3 })).toBe(false);
      expect((await admin.offsets(topic)).map((o) => o.partition)).toEqual([0, 1, 2]);
      const kafka = new Kafka({ brokers: brokers(), logLevel: logLevel.NOTHING }).admin();
      await kafka.connect();
      const { resources } = await kafka.describeConfigs({
        resources: [{ type: 2, name: topic, configNames: ['retention.ms', 'cleanup.policy'] }],
        includeSynonyms: false,
      });
      await kafka.disconnect();
      const entries = Object.fromEntries(
        (resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]),
      );
      expect(entries).toEqual({ 'retention.ms': '-1', 'cleanup.policy': 'delete' });
    } finally {
      await admin.deleteTopic(topic).catch(() => {});
      await admin.close();
    }
  });
});

describe('log admin: settings of an existing topic', () => {
  const cases: [string, { name: string; value: string }[], RegExp][] = [
    [
      'finite retention',
      [{ name: 'retention.ms', value: '604800000' }],
      /retention\.ms=604800000 .*retention\.ms=-1/,
    ],
    ['a size bound', [{ name: 'retention.bytes', value: '1073741824' }], /retention\.bytes=1073741824/],
    [
      'compaction',
      [{ name: 'cleanup.policy', value: 'compact' }],
      /cleanup\.policy=compact .*cleanup\.policy=delete/,
    ],
    [
      'compaction and deletion',
      [{ name: 'cleanup.policy', value: 'compact,delete' }],
      /cleanup\.policy=compact,delete/,
    ],
  ];
  for (const [what, configEntries, message] of cases)
    it(`refuses a topic made elsewhere with ${what}, saying what to change`, async () => {
      const topic = uniqueTopic('log-settings');
      const raw = new Kafka({ brokers: brokers(), logLevel: logLevel.NOTHING }).admin();
      await raw.connect();
      const admin = await createLogAdmin({ brokers: brokers(), clientId: 'log-test' });
      try {
        await raw.createTopics({
          waitForLeaders: true,
          topics: [{ topic, numPartitions: 1, configEntries }],
        });
        const refused = admin.ensureTopic({ topic, partitions: 1 });
        await expect(refused).rejects.toThrow(LogSettingsError);
        await expect(admin.ensureTopic({ topic, partitions: 1 })).rejects.toThrow(message);
        await expect(admin.ensureTopic({ topic, partitions: 1 })).rejects.toThrow(/must be kept forever/);
        // Fixed as the message says: accepted.
        await raw.alterConfigs({
          validateOnly: false,
          resources: [
            {
              type: 2,
              name: topic,
              configEntries: [
                { name: 'retention.ms', value: '-1' },
                { name: 'retention.bytes', value: '-1' },
                { name: 'cleanup.policy', value: 'delete' },
              ],
            },
          ],
        });
        // A broker applies a dynamic config change asynchronously: describeConfigs may show the old
        // value for a moment after alterConfigs returns (seen once in CI). Wait for the new one.
        const deadline = Date.now() + 10_000;
        for (;;) {
          const { resources } = await raw.describeConfigs({
            includeSynonyms: false,
            resources: [{ type: 2, name: topic, configNames: ['retention.ms'] }],
          });
          if (resources[0]?.configEntries[0]?.configValue === '-1' || Date.now() > deadline) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(await admin.ensureTopic({ topic, partitions: 1 })).toBe(false);
      } finally {
        await admin.deleteTopic(topic).catch(() => {});
        await admin.close();
        await raw.disconnect();
      }
    });

  it('the settings check is pure: retentionProblems', () => {
    expect(
      retentionProblems('t', { 'retention.ms': '-1', 'retention.bytes': '-1', 'cleanup.policy': 'delete' }),
    ).toEqual([]);
    expect(retentionProblems('t', { 'retention.ms': '1000' })).toHaveLength(1);
    expect(
      retentionProblems('t', { 'cleanup.policy': 'delete,compact', 'retention.bytes': '5' }),
    ).toHaveLength(2);
  });

  it('reads offsets again while a leader is down or moving, and only then (leaderUnavailable)', () => {
    const protocol = (type: string, code: number) =>
      new KafkaJSProtocolError({ message: type, type, code, retriable: true } as unknown as Error);
    // The error a failover gave a cluster run: ListOffsets to a broker no longer the leader.
    expect(leaderUnavailable(protocol('NOT_LEADER_FOR_PARTITION', 6))).toBe(true);
    expect(leaderUnavailable(protocol('LEADER_NOT_AVAILABLE', 5))).toBe(true);
    expect(leaderUnavailable(new KafkaJSConnectionError('Connection error: ECONNREFUSED'))).toBe(true);
    // Wrapped by kafkajs' retrier, as a read that ran out of retries is.
    const wrapped = new KafkaJSNumberOfRetriesExceeded(protocol('NOT_LEADER_FOR_PARTITION', 6), {
      retryCount: 1,
      retryTime: 300,
    });
    expect(leaderUnavailable(wrapped)).toBe(true);
    // Anything else is an answer, not a pause: thrown at once.
    expect(leaderUnavailable(protocol('UNKNOWN_TOPIC_OR_PARTITION', 3))).toBe(false);
    expect(leaderUnavailable(protocol('TOPIC_AUTHORIZATION_FAILED', 29))).toBe(false);
    expect(leaderUnavailable(new Error('boom'))).toBe(false);
  });

  it('a topic the service creates gets the replication factor asked for', async () => {
    // One broker here: a factor above it is refused by Kafka itself, which proves it is passed on.
    const topic = uniqueTopic('log-rf');
    const admin = await createLogAdmin({ brokers: brokers(), clientId: 'log-test' });
    try {
      await expect(admin.ensureTopic({ topic, partitions: 1, replicationFactor: 3 })).rejects.toThrow(
        /replication factor/i,
      );
      expect(await admin.ensureTopic({ topic, partitions: 1, replicationFactor: 1 })).toBe(true);
    } finally {
      await admin.deleteTopic(topic).catch(() => {});
      await admin.close();
    }
  });
});

describe('publisher', () => {
  it('keys records by vault so each vault stays in one partition, in order', async () => {
    const topic = uniqueTopic('log-pub');
    const admin = await createLogAdmin({ brokers: brokers(), clientId: 'log-test' });
    await admin.ensureTopic({ topic, partitions: 4 });
    await admin.close();
    const records = createHistoryGenerator({ vaults: 20, seed: 1 }).take(600);
    // A tiny request size forces many produce requests: order must still hold.
    const publisher = await createPublisher({
      brokers: brokers(),
      clientId: 'log-test',
      topic,
      maxRequestBytes: 20_000,
    });
    await publisher.publish(records);
    await publisher.close();
    const seen = new Map<string, { partition: number; blocks: number[] }>();
    let total = 0;
    const { consumer } = memoryConsumer(topic, new Map(), (b) => {
      for (const m of b.messages) {
        const d = decodeRecord(m.value);
        if (!d.ok) throw new Error(d.reason);
        const r = d.record;
        const entry = seen.get(r.vault) ?? { partition: b.partition, blocks: [] };
        expect(entry.partition).toBe(b.partition);
        entry.blocks.push(r.blockNumber);
        seen.set(r.vault, entry);
        total++;
      }
      return 'apply';
    });
    await consumer.start();
    await until(() => total === records.length);
    for (const [vault, { blocks }] of seen) {
      expect(blocks).toEqual(records.filter((r) => r.vault === vault).map((r) => r.blockNumber));
    }
  });
});

describe('batch consumer', () => {
  const messages = Array.from({ length: 30 }, (_, i) => ({ key: 'k', value: `m${i}` }));

  it('starts each partition at the offset stored with the projection, never before it', async () => {
    const topic = await topicWith(1, messages);
    const stored = new Map([[0, '12']]);
    const offsets: number[] = [];
    const { consumer } = memoryConsumer(topic, stored, (b) => {
      offsets.push(...b.messages.map((m) => Number(m.offset)));
      expect(b.commit.nextOffset).toBe(String(Number(b.messages.at(-1)?.offset) + 1));
      return 'apply';
    });
    await consumer.start();
    await until(() => stored.get(0) === '30');
    expect(offsets).toEqual(Array.from({ length: 18 }, (_, i) => i + 12));
    expect(consumer.assignment()).toEqual([0]);
  });

  it('re-reads from the offset the handler asks for when a batch does not start where it expects', async () => {
    const topic = await topicWith(1, messages);
    const stored = new Map<number, string>();
    const firsts: number[] = [];
    let asked = false;
    const { consumer } = memoryConsumer(topic, stored, (b) => {
      const first = Number(b.messages[0]?.offset);
      firsts.push(first);
      // Pretend the projection holds offset 7 the first time: the consumer must go back.
      if (!asked && Number(b.messages.at(-1)?.offset) >= 7) {
        asked = true;
        stored.set(0, '7');
        return { seekTo: '7' };
      }
      return 'apply';
    });
    await consumer.start();
    await until(() => stored.get(0) === '30');
    expect(asked).toBe(true);
    expect(firsts[1]).toBe(7);
  });

  it('replaces a consumer kafkajs gave up on (a TypeError in a handler), which goes on from the stored offsets', async () => {
    const topic = await topicWith(1, messages);
    const stored = new Map<number, string>();
    const applied: number[] = [];
    const replaced: string[] = [];
    let thrown = false;
    const { consumer } = memoryConsumer(
      topic,
      stored,
      (b) => {
        if (!thrown) {
          // A bug, not a broker's trouble: kafkajs crashes the consumer with restart: false.
          thrown = true;
          throw new TypeError('a handler bug');
        }
        applied.push(...b.messages.map((m) => Number(m.offset)));
        return 'apply';
      },
      { onReplace: (reason) => replaced.push(reason) },
    );
    await consumer.start();
    await until(() => stored.get(0) === '30');
    expect(thrown).toBe(true);
    expect(replaced).toEqual(['dead']);
    // Each offset applied once, in order: the batch that threw is applied by the successor.
    expect(applied).toEqual(Array.from({ length: 30 }, (_, i) => i));
  });

  it('commits to Kafka after the projection, for lag monitoring', async () => {
    const topic = await topicWith(
      2,
      messages.map((m, i) => ({ ...m, key: `k${i}` })),
    );
    const stored = new Map<number, string>();
    const { consumer, groupId } = memoryConsumer(topic, stored, () => 'apply');
    await consumer.start();
    const admin = await createLogAdmin({ brokers: brokers(), clientId: 'log-test' });
    try {
      await until(() => [...stored.values()].reduce((a, o) => a + Number(o), 0) === 30);
      let kafka = new Map<number, string>();
      for (let i = 0; i < 100; i++) {
        kafka = await admin.groupOffsets(groupId, topic);
        if ([...stored].every(([p, o]) => kafka.get(p) === o)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      for (const [p, o] of stored) expect(kafka.get(p)).toBe(o);
    } finally {
      await admin.close();
    }
  });
});
