import { createRequire } from 'node:module';
import { KafkaJSConnectionError } from 'kafkajs';
import { describe, expect, it } from 'vitest';

/**
 * kafkajs 2.2.4's sendMessages as patched at install (patches/kafkajs+2.2.4.patch, tulios/kafkajs#1303,
 * PR #1798), driven by a scripted cluster: the real test is the broker kill on a 3-broker cluster
 * (test/cluster/kafka-cluster.test.ts); this one pins the rule without brokers. Unpatched, both
 * cases below resolve with partitions never sent.
 */
const require = createRequire(import.meta.url);

interface Produced {
  broker: number;
  partitions: number[];
}
type SendMessages = (
  options: Record<string, unknown>,
) => (request: Record<string, unknown>) => Promise<{ topicName: string; partition: number }[]>;
const sendMessages = require('kafkajs/src/producer/sendMessages') as SendMessages;
const createRetry = require('kafkajs/src/retry') as (options: Record<string, unknown>) => unknown;

/**
 * Brokers 1 and 2 lead partitions 0–3 (even → 1, odd → 2). Broker 2 fails its first request with a
 * connection error; the metadata refresh that follows moves its partitions to broker 1, which has
 * already answered in the first attempt.
 */
function scriptedCluster(produced: Produced[]) {
  let leaders: Record<number, number> = { 0: 1, 1: 2, 2: 1, 3: 2 };
  let failures = 1;
  const brokers = new Map(
    [1, 2].map((nodeId) => [
      nodeId,
      {
        nodeId,
        async produce({
          topicData,
        }: {
          topicData: { topic: string; partitions: { partition: number }[] }[];
        }) {
          const partitions = topicData.flatMap((t) => t.partitions.map((p) => p.partition));
          if (nodeId === 2 && failures-- > 0) {
            throw new KafkaJSConnectionError('Connection error: ECONNREFUSED', { broker: 'b2' } as never);
          }
          produced.push({ broker: nodeId, partitions });
          return {
            topics: topicData.map((t) => ({
              topicName: t.topic,
              partitions: t.partitions.map((p) => ({
                partition: p.partition,
                errorCode: 0,
                baseOffset: '0',
              })),
            })),
          };
        },
      },
    ]),
  );
  const metadata = () =>
    [0, 1, 2, 3].map((partitionId) => ({ partitionId, leader: leaders[partitionId], partitionErrorCode: 0 }));
  return {
    refreshMetadataIfNecessary: async () => {},
    refreshMetadata: async () => {
      leaders = { 0: 1, 1: 1, 2: 1, 3: 1 };
    },
    addMultipleTargetTopics: async () => {},
    isConnected: () => true,
    removeBroker: () => {},
    targetTopics: new Set(['t']),
    findTopicPartitionMetadata: metadata,
    findLeaderForPartitions: (_topic: string, partitions: string[]) => {
      const out: Record<number, number[]> = {};
      for (const p of partitions.map(Number)) {
        const leader = leaders[p] as number;
        out[leader] = [...(out[leader] ?? []), p];
      }
      return out;
    },
    findBroker: async ({ nodeId }: { nodeId: string }) => brokers.get(Number(nodeId)),
  };
}

const eosManager = {
  acquireBrokerLock: async () => {},
  releaseBrokerLock: async () => {},
  isTransactional: () => false,
  getSequence: () => 0,
  updateSequence: () => {},
  getProducerId: () => -1,
  getProducerEpoch: () => 0,
};
const logger = { debug: () => {}, error: () => {}, warn: () => {}, info: () => {} };

function send(produced: Produced[]) {
  return sendMessages({
    logger,
    cluster: scriptedCluster(produced),
    partitioner: ({ message }: { message: { key: string } }) => Number(message.key),
    eosManager,
    retrier: createRetry({ retries: 3, initialRetryTime: 1, maxRetryTime: 5 }),
  })({
    acks: -1,
    timeout: 1000,
    compression: 0,
    topicMessages: [{ topic: 't', messages: [0, 1, 2, 3].map((p) => ({ key: String(p), value: `m${p}` })) }],
  });
}

describe('kafkajs sendMessages (patched)', () => {
  it('re-sends the partitions of a failed broker to their new leader, even one that already answered', async () => {
    const produced: Produced[] = [];
    const responses = await send(produced);
    expect(responses.map((r) => r.partition).sort()).toEqual([0, 1, 2, 3]);
    // Attempt 1: broker 1 takes 0 and 2, broker 2 fails. Attempt 2: 1 and 3, now led by broker 1.
    expect(produced).toEqual([
      { broker: 1, partitions: [0, 2] },
      { broker: 1, partitions: [1, 3] },
    ]);
  });

  it('sends each acknowledged partition once: a retry does not repeat what was acknowledged', async () => {
    const produced: Produced[] = [];
    await send(produced);
    const sent = produced.flatMap((p) => p.partitions).sort();
    expect(sent).toEqual([0, 1, 2, 3]);
  });
});
