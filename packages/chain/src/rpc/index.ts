/** RPC plumbing for the indexer: counted client, classified errors, retries, adaptive getLogs, headers, state reads. */
export {
  type BlockHeader,
  BlockNotAvailableError,
  getChainIdFromNode,
  getHeaders,
  getHeadNumber,
} from './blocks.js';
export { type BloomFilter, bloomMayMatch, bloomOf, compileBloomFilter } from './bloom.js';
export {
  type CountingChainClient,
  createCountingChainClient,
  type RpcCallObserver,
  type RpcStats,
} from './client.js';
export { COALESCED_METHODS, coalesceTransport, UNSHARED } from './coalesce.js';
export { classifyRpcError, describeRpcError, type RpcErrorKind } from './errors.js';
export {
  type AdaptiveLogsOptions,
  getLogsAdaptive,
  getLogsByBlockHash,
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
