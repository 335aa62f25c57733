/**
 * The exactly-once runner: every decision whether a record is applied is taken here, none in a
 * projection. batch.ts — the partition's offset row (lock, skip of what was applied, save), the
 * dead letters' storing, the commit's stream notice; streams.ts — in a keyed, numbered stream
 * (the vault records), duplicates by number and identity, gaps held and released, reverts' void
 * holds, refusals made dead letters; consume.ts — the one consume loop of every projection.
 * Projections are declarations it feeds: the vault projection (../projection.ts, a stream
 * projection) and the strategy side (../strategy/projection.ts, applied record by record).
 */
export {
  type Accepted,
  type Decoding,
  type Projection,
  type ProjectionRun,
  type Refusal,
  type RunnerItem,
  type RunResult,
  runBatch,
  vaultOfKey,
} from './batch.js';
export {
  type Applied,
  createRunnerConsumer,
  type RunnerConsumerConfig,
  type RunnerStore,
} from './consume.js';
export { retriedFollow, runStreams } from './decide.js';
export {
  type ApplyRefusal,
  NO_HEAD,
  type SequencedRecord,
  type StreamBatch,
  type StreamCounts,
  type StreamLetter,
  type StreamProjection,
  type StreamState,
  type Whole,
} from './streams.js';
