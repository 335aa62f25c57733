export { FoldError, type FoldErrorReason, isFoldError } from './errors.js';
export { closeBlock, createVaultState, evolve, foldRecord } from './evolve.js';
export { PERFORMANCE_FEE_BPS, performanceFeeDueRaw, performanceFeeDueUsd, settleHighWater } from './fees.js';
export { figuresByStrategy } from './lp.js';
export { blockReturnIndex, MIN_RETURN_BASE_USD, nextReturnIndex, type ValuedFlow } from './return-index.js';
export { checkSeq, nextSeqPosition, type SeqPosition, type SeqVerdict, voidedBy } from './sequence.js';
export { deserializeState, type SerializedState, serializedState, serializeState } from './serialize.js';
export type {
  Address,
  BlockFlow,
  BlockStart,
  PoolPrice,
  Position,
  Suspension,
  TokenPrice,
  VaultState,
} from './state.js';
export { netUsd, strategyDeltaUsd } from './state.js';
export { DUST_USD, hasCapital, positionInRange, statusOf } from './status.js';
export { computeValueUsd, pendingRewardsUsd, positionAmounts, positionValueUsd } from './valuation.js';
export { FOLD_VERSION } from './version.js';
