/**
 * The local chain for tests and the demo: anvil from npm, dev-chain controls, and the scenario
 * driver that deploys the reference contracts and plays histories on them.
 */
export {
  ANVIL_CHAIN_ID,
  type AnvilInstance,
  anvilBinary,
  type StartAnvilOptions,
  startAnvil,
} from './anvil.js';
export {
  chainTime,
  DEFAULT_FEED_HEARTBEAT_SECONDS,
  type FeedHeartbeatOptions,
  type FeedKeeper,
  type FeedKeeperLogger,
  type FeedRound,
  type FeedTarget,
  heartbeatOf,
  type KeepFeedsFreshOptions,
  keepFeedsFresh,
  readFeedRound,
  refreshDueFeeds,
} from './feeds.js';
export { type CuttableProxy, cuttableProxy } from './proxy.js';
export { createRpc, type DevChain, devChain, type Rpc, type RpcCall, RpcError } from './rpc.js';
export * from './scenario/bulk.js';
export { type BulkOptions, type BulkResult, playBulk } from './scenario/bulk.js';
export * from './scenario/demo.js';
export {
  countVaultEvents,
  DEMO_STEPS,
  type DemoOptions,
  type DemoResult,
  type DemoVault,
  playDemoScenario,
} from './scenario/demo.js';
export * from './scenario/deploy.js';
export {
  deployReferenceStack,
  type ReferenceStack,
  type StackAccounts,
  type StackPool,
  type StackToken,
  toAnswer,
} from './scenario/deploy.js';
export * from './scenario/prices.js';
export { movePrice, readSlot0 } from './scenario/prices.js';
export * from './scenario/vault-ops.js';
export { strategyId } from './scenario/vault-ops.js';
export * from './scenario/wallet.js';
