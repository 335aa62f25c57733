import { type ICustomPartitioner, Partitioners } from 'kafkajs';

/** The topic's partition count changed under a running publisher (keyed order would break). */
export class PartitionCountChangedError extends Error {
  override name = 'PartitionCountChangedError';
  constructor(topic: string, before: number, now: number) {
    super(
      `topic ${topic} went from ${before} to ${now} partitions while publishing: records keyed by vault would land on other partitions than the vault's earlier ones, out of order. Partitions of the event log are never changed; reindex into a new topic with the partitions wanted (vault-yield reindex --topic NEW --partitions ${now})`,
    );
  }
}

/** Keys remembered per partition count; beyond this the cache starts over (bounded memory). */
const MAX_KEYS = 100_000;

/**
 * kafkajs' DefaultPartitioner (Java-compatible murmur2: a vault lands where Java clients put it),
 * with each string key's partition remembered per partition count. A keyed message's partition
 * depends only on its key and the number of partitions, and the log has one key per vault, so
 * murmur2 (slow in JavaScript: ~10 µs a record) runs once per vault instead of once per record.
 * Messages without a string key, or with an explicit partition, go to the default as they are.
 */
export const KeyCachedPartitioner: ICustomPartitioner = () => {
  const inner = Partitioners.DefaultPartitioner();
  const topics = new Map<string, { partitions: number; keys: Map<string, number> }>();
  return (args) => {
    const { message, topic } = args;
    const key = message.key;
    if (typeof key !== 'string' || (message.partition !== undefined && message.partition !== null))
      return inner(args);
    let t = topics.get(topic);
    // A vault's records stay in one partition only while the count stays: refuse to go on.
    if (t && t.partitions !== args.partitionMetadata.length)
      throw new PartitionCountChangedError(topic, t.partitions, args.partitionMetadata.length);
    if (!t || t.keys.size >= MAX_KEYS) {
      t = { partitions: args.partitionMetadata.length, keys: new Map() };
      topics.set(topic, t);
    }
    let p = t.keys.get(key);
    if (p === undefined) {
      p = inner(args);
      t.keys.set(key, p);
    }
    return p;
  };
};
