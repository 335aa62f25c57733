/**
 * Chain access for the vault service (the only package that calls viem): a client factory,
 * the event ABIs and topic lists for log filters, log → record decoding, and valuation contexts
 * read at a block.
 */
export {
  type ChainClient,
  type ChainClientConfig,
  createChainClient,
  createHeadGuard,
  type HeadGuard,
  headGuardOf,
} from './client/index.js';
export {
  asciiToBytes32,
  bytes32ToAscii,
  type ChainRecord,
  type ChainRecordType,
  type DecodeFailure,
  type DecodeLogResult,
  type DecodeVaultLogResult,
  decodeLog,
  decodeVaultLog,
  type LogPosition,
  type LogRef,
  type RawLog,
  refOf,
  type WatchedEvent,
} from './decode/index.js';
export {
  answerUpdatedEventAbi,
  eventTopics,
  factoryEventsAbi,
  swapEventAbi,
  transferEventAbi,
  vaultCreatedEventAbi,
  vaultEventsAbi,
} from './events/index.js';
export { type FactoryInfo, readFactoryInfo } from './factory.js';
export { createHeadWatcher, type HeadWatcher, type HeadWatcherConfig } from './heads/index.js';
export * from './rpc/index.js';
export {
  type BlockValuator,
  type BlockValuatorConfig,
  createBlockValuator,
  LENS_ADDRESS,
  type LensMode,
  type ValuedVault,
} from './valuation/block.js';
export { BlockValuationError } from './valuation/errors.js';
export {
  createValuationReader,
  type TokenInfo,
  type ValuationReader,
  type ValuationReaderConfig,
  type VaultInfo,
} from './valuation/index.js';
