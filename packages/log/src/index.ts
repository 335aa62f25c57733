export {
  createLogAdmin,
  type LogAdmin,
  LogSettingsError,
  type PartitionOffsets,
  retentionProblems,
  type TopicSpec,
} from './admin/index.js';
export {
  type BatchConsumer,
  type BatchConsumerConfig,
  type BatchControl,
  type BatchOutcome,
  consumerStalled,
  createBatchConsumer,
  type LogBatch,
  type LogMessage,
  type OffsetCommit,
  type ReplaceReason,
} from './consumer/index.js';
export {
  BrokersUnansweredError,
  kafkaTlsOptions,
  type LogClientConfig,
  type LogSecurity,
} from './kafka.js';
export { createPublisher, type Publisher, type PublisherConfig, type RawMessage } from './publisher/index.js';
export {
  assertKafkajsPatched,
  KAFKAJS_PATCH_MARKER,
  KafkajsUnpatchedError,
  kafkajsPatchedFile,
} from './publisher/patch-check.js';
