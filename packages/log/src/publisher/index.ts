import {
  DEFAULT_RECORD_ENCODING,
  encodeRecordAs,
  type RecordEncoding,
  type VaultRecord,
} from '@vault-yield/domain';
import { CompressionTypes, type Message } from 'kafkajs';
import { brokersAnswer, kafkaClient, type LogClientConfig } from '../kafka.js';
import { KeyCachedPartitioner } from './partitioner.js';
import { assertKafkajsPatched } from './patch-check.js';

/** A message as bytes, for callers that publish something other than a valid record. */
export interface RawMessage {
  key: string | Buffer | null;
  value: Buffer | null;
}

export interface PublisherConfig extends LogClientConfig {
  topic: string;
  /** Upper bound of one produce request's payload; stays under the topic's max.message.bytes. */
  maxRequestBytes?: number;
  /** How records are written (default binary; packages/domain records/codec.ts). */
  encoding?: RecordEncoding;
}

/**
 * Publishes to the event log: idempotent producer, `acks: -1`, records keyed by vault so one
 * vault's stream stays ordered in one partition. `publish` resolves once every record is
 * acknowledged by the in-sync replicas; callers checkpoint only after that.
 */
export interface Publisher {
  publish(records: readonly VaultRecord[]): Promise<void>;
  publishRaw(messages: readonly RawMessage[]): Promise<void>;
  close(): Promise<void>;
}

export async function createPublisher(config: PublisherConfig): Promise<Publisher> {
  // Refuses an unpatched kafkajs (installed without scripts): it loses acknowledged records.
  assertKafkajsPatched();
  await brokersAnswer(config);
  const producer = kafkaClient(config).producer({
    // Java-compatible murmur2 partitioning (a vault lands where Java clients put it), once per key.
    createPartitioner: KeyCachedPartitioner,
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  const maxBytes = config.maxRequestBytes ?? 4 * 1024 * 1024;

  async function send(messages: Message[], size: number[]): Promise<void> {
    // Chunk by bytes: one request per chunk, in order, each acknowledged before the next.
    let start = 0;
    while (start < messages.length) {
      let bytes = 0;
      let end = start;
      while (end < messages.length && (end === start || bytes + (size[end] ?? 0) <= maxBytes)) {
        bytes += size[end] ?? 0;
        end++;
      }
      await producer.send({
        topic: config.topic,
        acks: -1,
        compression: CompressionTypes.None,
        messages: messages.slice(start, end),
      });
      start = end;
    }
  }

  return {
    async publish(records) {
      const messages: Message[] = [];
      const size: number[] = [];
      for (const r of records) {
        const value = encodeRecordAs(r, config.encoding ?? DEFAULT_RECORD_ENCODING);
        messages.push({ key: r.vault, value });
        size.push(value.length + 64);
      }
      await send(messages, size);
    },
    async publishRaw(raw) {
      const messages: Message[] = raw.map((m) => ({ key: m.key, value: m.value }));
      await send(
        messages,
        raw.map((m) => (m.value?.length ?? 0) + 64),
      );
    },
    close: () => producer.disconnect(),
  };
}
