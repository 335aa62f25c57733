export { FoldError, type FoldErrorReason, isFoldError } from './errors.js';
export { createVaultState, evolve, foldRecord } from './evolve.js';
export { performanceFeeDueRaw, performanceFeeDueUsd } from './fees.js';
export { deserializeState, type SerializedState, serializedState, serializeState } from './serialize.js';
export type { Address, PoolMark, Position, Suspension, TokenMark, VaultState } from './state.js';
export { netUsd, strategyDeltaUsd } from './state.js';
export { hasCapital, positionInRange, statusOf } from './status.js';
export { computeValueUsd, pendingRewardsUsd, positionAmounts, positionValueUsd } from './valuation.js';
