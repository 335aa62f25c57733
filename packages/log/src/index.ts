export { createLogAdmin, type LogAdmin, type PartitionOffsets, type TopicSpec } from './admin/index.js';
export {
  type BatchConsumer,
  type BatchConsumerConfig,
  type BatchControl,
  type BatchOutcome,
  createBatchConsumer,
  type LogBatch,
  type LogMessage,
  type OffsetCommit,
} from './consumer/index.js';
export type { LogClientConfig } from './kafka.js';
export { createPublisher, type Publisher, type PublisherConfig, type RawMessage } from './publisher/index.js';
