/**
 * @vault-yield/projector — folds the log into the projection schema: the exactly-once runner
 * (runner/), the projections it feeds (the vault projection: projection.ts and its rows, rows.ts;
 * the strategy side: market/), and `startProjections`, the one wiring of them all that the
 * projector's main, `vault-yield dev` and the builds of `rebuild` use.
 */
export { type ApplyResult, applyBatch, type BatchStats } from './apply.js';
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
export { createVaultProjection, type VaultBatchOut, type VaultProjectionOptions } from './projection.js';
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
  type Decoding,
  type Projection,
  type ProjectionRun,
  type Refusal,
  type RunnerItem,
  type RunResult,
  runBatch,
} from './runner/index.js';
export {
  createStrategyProjection,
  createStrategyProjector,
  type DecodedStrategyRecord,
  decodeStrategyRecord,
  refreshStrategyStats,
  type StrategyApplied,
  type StrategyProjector,
  type StrategyProjectorOptions,
  type StrategyRecordKind,
  strategyGroups,
} from './strategy/index.js';
