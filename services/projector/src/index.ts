/**
 * @vault-yield/projector — folds the log into the projection schema: the exactly-once runner
 * (runner/: every decision whether a record is applied, and the one consume loop), the
 * projections it feeds (the vault projection: projection.ts, its fold loop fold.ts and its rows
 * rows.ts; the strategy side: strategy/), and `startProjections`, the one wiring of them all that
 * the projector's main, `vault-yield dev` and the builds of `rebuild` use.
 */
export { type ApplyResult, applyBatch, applyResult, type BatchStats } from './apply.js';
export {
  loadProjectorEnv,
  PROJECTOR_BATCH_DEFAULTS,
  type ProjectorConfig,
  type ProjectorEnv,
  projectorConfigFromEnv,
  projectorConfigSchema,
  projectorEnvSchema,
  type ResolvedProjectorConfig,
  type StrategyProjectionInput,
  strategyProjectionConfigSchema,
} from './config.js';
export { createProjectorMetrics, type ProjectorMetrics } from './metrics.js';
export {
  createVaultProjection,
  type VaultBatchOut,
  type VaultProjectionOptions,
} from './projection.js';
export {
  type FollowingProjections,
  type FollowOptions,
  followLiveProjections,
  type Projections,
  type ProjectionsConfig,
  type StrategyProjectionConfig,
  startProjections,
} from './projections/index.js';
export { createProjector, type Projector } from './projector.js';
export { type RetryOutcome, retryDeadLetters } from './retry.js';
export {
  bodyOf,
  type Decoded,
  decode,
  type FoldStep,
  foldStep,
  ledgerRow,
  offLedger,
  positionOf,
  positionRows,
  snapshotRow,
} from './rows.js';
export {
  type Accepted,
  type Applied,
  type ApplyRefusal,
  createRunnerConsumer,
  type Decoding,
  type Projection,
  type ProjectionRun,
  type Refusal,
  type RunnerConsumerConfig,
  type RunnerItem,
  type RunnerStore,
  type RunResult,
  runBatch,
  runStreams,
  type SequencedRecord,
  type StreamBatch,
  type StreamCounts,
  type StreamProjection,
  type StreamState,
  type Whole,
} from './runner/index.js';
export {
  createStrategyProjection,
  createStrategyProjector,
  type DecodedStrategyRecord,
  decodeStrategyRecord,
  refreshStrategyFigures,
  refreshStrategyStats,
  type StrategyApplied,
  type StrategyProjector,
  type StrategyProjectorOptions,
  type StrategyRecordKind,
  strategyGroups,
} from './strategy/index.js';
