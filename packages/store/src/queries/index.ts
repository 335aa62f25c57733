/**
 * Read queries: every SQL statement the reader runs. Each takes the reader's pool (read-only role,
 * search_path = projection schema) and uses named (prepared) statements.
 */
export {
  CATALOGUE_MAX_ROWS,
  type ScreenMetaRow,
  type StrategyRow,
  screenMeta,
  strategyList,
  type UniverseAssetRow,
  type UniversePairRow,
  universeAssets,
  universePairs,
} from './catalogue.js';
export { type EquityPointRow, type EquityWindow, equitySeries } from './equity.js';
export {
  type LedgerFilter,
  type LedgerKey,
  type LedgerPage,
  ledgerByTx,
  ledgerPage,
  ledgerTxPage,
  PER_TYPE_MAX,
  type TxLedgerFilter,
  type TxLedgerKey,
  type TxLedgerPage,
} from './ledger.js';
export {
  type ChainBlock,
  type ChainStatus,
  chainStatuses,
  type Freshness,
  type IndexerHead,
  indexerHeads,
  projectionFreshness,
  type Readiness,
  readiness,
} from './readiness.js';
export {
  type SnapshotJson,
  snapshotOf,
  snapshotsMatching,
  snapshotsOf,
  vaultExists,
  vaultsAt,
} from './snapshot.js';
export {
  type StreamBounds,
  type StreamCommit,
  type StreamPageBounds,
  streamBounds,
  streamCommits,
  streamRows,
} from './stream.js';
export {
  type VaultListFilter,
  type VaultPage,
  type VaultSummaryRow,
  type VaultsKey,
  vaultPage,
} from './vaults.js';
