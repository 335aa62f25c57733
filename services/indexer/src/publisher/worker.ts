import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '@vault-yield/common';
import { createPublisher, type Publisher, type RawMessage } from '@vault-yield/log';
import {
  type FromPublisher,
  type PublisherThreadConfig,
  type ToPublisher,
  toThreadError,
} from './protocol.js';

/**
 * The publisher thread: one idempotent producer (packages/log's createPublisher), publishing the
 * batches it is sent one after another, in the order they arrive, each acknowledged back once
 * Kafka acked all its records. The records arrive encoded (encodeRecord, in the indexer thread);
 * the Kafka client's work runs here, beside the indexer thread that reads and decodes the chain.
 */
const port = parentPort!;
const config = workerData as PublisherThreadConfig;
const post = (m: FromPublisher) => port.postMessage(m);

const logger = createLogger({
  name: 'indexer',
  level: config.logLevel,
  destination: { write: (line: string) => post({ type: 'log', line }) },
});

let publisher: Publisher;
try {
  publisher = await createPublisher({
    brokers: config.brokers,
    ...config.security,
    clientId: config.clientId,
    topic: config.topic,
    logger,
  });
  post({ type: 'ready' });
} catch (err) {
  post({ type: 'init-failed', error: toThreadError(err) });
  port.close();
  throw err;
}

// Batches publish strictly one at a time, in arrival order (per-vault order in the topic).
let queue: Promise<void> = Promise.resolve();
port.on('message', (m: ToPublisher) => {
  if (m.type === 'publish') {
    queue = queue.then(async () => {
      try {
        const messages: RawMessage[] = new Array(m.keys.length);
        for (let i = 0; i < m.keys.length; i++) {
          const start = m.offsets[i]!;
          messages[i] = { key: m.keys[i]!, value: Buffer.from(m.bytes, start, m.offsets[i + 1]! - start) };
        }
        await publisher.publishRaw(messages);
        post({ type: 'done', id: m.id });
      } catch (err) {
        post({ type: 'failed', id: m.id, error: toThreadError(err) });
      }
    });
  } else if (m.type === 'close') {
    queue = queue.then(async () => {
      await publisher.close().catch(() => {});
      post({ type: 'closed' });
      port.close();
    });
  }
});
