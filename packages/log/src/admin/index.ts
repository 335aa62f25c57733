import { kafkaClient, type LogClientConfig } from '../kafka.js';

export interface TopicSpec {
  topic: string;
  partitions: number;
  replicationFactor?: number;
  /** Largest record batch the broker accepts for the topic; big batches make publishing fast. */
  maxMessageBytes?: number;
}

export interface PartitionOffsets {
  partition: number;
  /** First offset still in the log. */
  low: string;
  /** Offset the next record will get (the high watermark). */
  high: string;
}

/** Topic housekeeping: the event log topics live forever (`retention.ms=-1`, no compaction). */
export interface LogAdmin {
  /** Creates the topic if missing (idempotent); returns true when it created it. */
  ensureTopic(spec: TopicSpec): Promise<boolean>;
  /** Low/high offsets per partition, e.g. to know when a consumer has caught up. */
  offsets(topic: string): Promise<PartitionOffsets[]>;
  /** Committed offsets of a group in Kafka (the projector commits there for lag monitoring only). */
  groupOffsets(groupId: string, topic: string): Promise<Map<number, string>>;
  /** Names of the topics that exist. */
  listTopics(): Promise<string[]>;
  /** Deletes the topic if it exists (a missing topic is not an error). */
  deleteTopic(topic: string): Promise<void>;
  close(): Promise<void>;
}

export async function createLogAdmin(config: LogClientConfig): Promise<LogAdmin> {
  const admin = kafkaClient(config).admin();
  await admin.connect();

  async function waitForLeaders(topic: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
        if (topics[0]?.partitions.every((p) => p.leader >= 0)) return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
      if (Date.now() > deadline) throw new Error(`topic ${topic} has no leaders after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  return {
    async ensureTopic({ topic, partitions, replicationFactor = 1, maxMessageBytes = 16 * 1024 * 1024 }) {
      const existing = await admin.listTopics();
      if (existing.includes(topic)) return false;
      try {
        return await admin.createTopics({
          waitForLeaders: true,
          topics: [
            {
              topic,
              numPartitions: partitions,
              replicationFactor,
              configEntries: [
                { name: 'retention.ms', value: '-1' },
                { name: 'retention.bytes', value: '-1' },
                { name: 'cleanup.policy', value: 'delete' },
                { name: 'max.message.bytes', value: String(maxMessageBytes) },
              ],
            },
          ],
        });
      } catch (err) {
        // Lost a race with another creator: the topic exists, which is all we wanted.
        if ((err as { type?: string }).type === 'TOPIC_ALREADY_EXISTS') return false;
        // The topic was created but its leaders were not visible before kafkajs gave up waiting
        // (seen on a broker that has just started): wait for them here.
        if (!(await admin.listTopics()).includes(topic)) throw err;
        await waitForLeaders(topic);
        return true;
      }
    },
    async offsets(topic) {
      const rows = await admin.fetchTopicOffsets(topic);
      return rows
        .map((r) => ({ partition: r.partition, low: r.low, high: r.high }))
        .sort((a, b) => a.partition - b.partition);
    },
    async groupOffsets(groupId, topic) {
      const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return new Map((entry?.partitions ?? []).map((p) => [p.partition, p.offset]));
    },
    listTopics: () => admin.listTopics(),
    async deleteTopic(topic) {
      // kafkajs retries a missing topic for a long time: look first.
      if (!(await admin.listTopics()).includes(topic)) return;
      await admin.deleteTopics({ topics: [topic] });
      // Deletion is asynchronous in the broker; a create right after must not find it half-gone.
      for (let i = 0; i < 100 && (await admin.listTopics()).includes(topic); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () => admin.disconnect(),
  };
}
