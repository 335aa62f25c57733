/** RPC plumbing for the indexer: counted client, classified errors, retries, adaptive getLogs, headers, state reads. */
export { type BlockHeader, getChainIdFromNode, getHeaders, getHeadNumber } from './blocks.js';
export { type CountingChainClient, createCountingChainClient, type RpcStats } from './client.js';
export { classifyRpcError, describeRpcError, type RpcErrorKind } from './errors.js';
export {
  type AdaptiveLogsOptions,
  getLogsAdaptive,
  getLogsOnce,
  type IndexerLog,
  type LogFilter,
} from './logs.js';
export {
  readTokenFeed,
  readVaultPositions,
  readVaultRewardToken,
  readVaultRewardTokens,
  type TokenFeedState,
  type VaultPositionState,
} from './reads.js';
export { type RetryOptions, retryAfterMs, withRetry } from './retry.js';
