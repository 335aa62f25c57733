import { brokersAnswer, kafkaClient, type LogClientConfig } from '../kafka.js';

/**
 * kafkajs' ConfigResourceTypes.TOPIC. Not imported by name: Node's ESM loader cannot see that
 * export of the CommonJS package (vitest can, so only the real processes would fail).
 */
const TOPIC_RESOURCE = 2;

/** A topic whose settings would lose records of the log (finite retention, compaction). */
export class LogSettingsError extends Error {
  override name = 'LogSettingsError';
}

/** Why an existing topic cannot hold the log (empty when it can): it must keep every record. */
export function retentionProblems(topic: string, configs: Record<string, string | undefined>): string[] {
  const fix = (name: string) =>
    `kafka-configs.sh --bootstrap-server … --alter --entity-type topics --entity-name ${topic} --add-config ${name}`;
  const problems: string[] = [];
  const ms = configs['retention.ms'];
  if (ms !== undefined && ms !== '-1')
    problems.push(`retention.ms=${ms} deletes records after that age (fix: ${fix('retention.ms=-1')})`);
  const bytes = configs['retention.bytes'];
  if (bytes !== undefined && bytes !== '-1')
    problems.push(
      `retention.bytes=${bytes} deletes the oldest records past that size (fix: ${fix('retention.bytes=-1')})`,
    );
  const policy = configs['cleanup.policy'];
  if (policy?.split(',').some((p) => p.trim() === 'compact'))
    problems.push(
      `cleanup.policy=${policy} keeps only each vault's last record (fix: ${fix('cleanup.policy=delete')})`,
    );
  return problems;
}

export interface TopicSpec {
  topic: string;
  partitions: number;
  /**
   * Copies of each partition. Default: 1 on a single-broker cluster (development), else 3 — also
   * while a broker is down: creation then fails loudly rather than making an under-replicated log.
   * kafkajs speaks CreateTopics v3, which cannot ask for the broker's default.
   */
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
  /**
   * Creates the topic if missing (idempotent); returns true when it created it. An existing topic
   * with finite retention or compaction is refused (LogSettingsError): the log is kept forever.
   */
  ensureTopic(spec: TopicSpec): Promise<boolean>;
  /** Throws LogSettingsError when the topic's settings would lose records. */
  checkRetention(topic: string): Promise<void>;
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

/**
 * An offsets read that a fresh client may answer in a moment: a broker down (connection refused
 * or lost), or a partition whose leadership is moving (the broker asked is no longer, or not yet,
 * its leader: the election after a broker failure), possibly wrapped by kafkajs' retrier.
 */
export function leaderUnavailable(err: unknown): boolean {
  for (
    let e = err as { name?: string; type?: string; cause?: unknown } | undefined;
    e;
    e = e.cause as typeof e
  ) {
    if (e.name === 'KafkaJSConnectionError' || e.name === 'KafkaJSConnectionClosedError') return true;
    if (e.type === 'NOT_LEADER_FOR_PARTITION' || e.type === 'LEADER_NOT_AVAILABLE') return true;
  }
  return false;
}

export async function createLogAdmin(config: LogClientConfig): Promise<LogAdmin> {
  await brokersAnswer(config);
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

  async function checkRetention(topic: string): Promise<void> {
    const names = ['retention.ms', 'retention.bytes', 'cleanup.policy'];
    const { resources } = await admin.describeConfigs({
      resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: names }],
      includeSynonyms: false,
    });
    const configs = Object.fromEntries(
      (resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]),
    );
    const problems = retentionProblems(topic, configs);
    if (problems.length)
      throw new LogSettingsError(
        `topic ${topic} would lose records of the event log, which must be kept forever (rebuilds fold it from offset 0): ${problems.join('; ')}`,
      );
  }

  return {
    checkRetention,
    async ensureTopic({ topic, partitions, replicationFactor, maxMessageBytes = 16 * 1024 * 1024 }) {
      const existing = await admin.listTopics();
      if (existing.includes(topic)) {
        await checkRetention(topic);
        return false;
      }
      const copies = replicationFactor ?? ((await admin.describeCluster()).brokers.length === 1 ? 1 : 3);
      try {
        return await admin.createTopics({
          waitForLeaders: true,
          topics: [
            {
              topic,
              numPartitions: partitions,
              replicationFactor: copies,
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
        const causes = (err as { errors?: { type?: string }[] }).errors ?? [];
        if (causes.some((e) => e.type === 'INVALID_REPLICATION_FACTOR'))
          throw new LogSettingsError(
            `topic ${topic}: replication factor ${copies} is more than the cluster's brokers (set KAFKA_REPLICATION_FACTOR to at most their number)`,
          );
        // The topic was created but its leaders were not visible before kafkajs gave up waiting
        // (seen on a broker that has just started), or, on a cluster, the broker asked had not
        // yet heard of the new topic (UNKNOWN_TOPIC_OR_PARTITION): wait for its leaders here.
        const unknown = (err as { type?: string }).type === 'UNKNOWN_TOPIC_OR_PARTITION';
        if (!unknown && !(await admin.listTopics()).includes(topic)) throw err;
        await waitForLeaders(topic);
        return true;
      }
    },
    async offsets(topic) {
      // kafkajs retries a dead leader's ListOffsets on its cached metadata until it gives up
      // (≈ 50 s), never refreshing it: ask a short-lived client, a new one (fresh metadata) each
      // time a broker is unreachable or a leader is moving, until the partition has a live leader.
      for (let attempt = 0; ; attempt++) {
        const quick = kafkaClient({ ...config, retries: 1 }).admin();
        try {
          await quick.connect();
          const rows = await quick.fetchTopicOffsets(topic);
          return rows
            .map((r) => ({ partition: r.partition, low: r.low, high: r.high }))
            .sort((a, b) => a.partition - b.partition);
        } catch (err) {
          if (attempt >= 30 || !leaderUnavailable(err)) throw err;
          await new Promise((r) => setTimeout(r, 500));
        } finally {
          await quick.disconnect().catch(() => {});
        }
      }
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
