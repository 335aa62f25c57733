export * from './admin/index.js';
export * from './catalogue/index.js';
export {
  type BadLogRow,
  createIndexerStore,
  type IndexerCheckpoint,
  type IndexerCommit,
  type IndexerRewind,
  type IndexerSnapshot,
  type IndexerStore,
  type StoredBlock,
  type StoredIndexerVault,
  type StoredVaultSeq,
} from './indexer/index.js';
export {
  appliedVersions,
  latestVersion,
  type MigrateResult,
  type Migration,
  migrate,
  migrations,
  resetSchema,
} from './migrations/index.js';
export {
  bytesToHex,
  createPgPool,
  hexToBytes,
  ident,
  type PgPoolConfig,
  type Pool,
  type PoolClient,
  withTransaction,
} from './pool/index.js';
export {
  type CopyBuffer,
  comparePosition,
  createProjectionStore,
  type DeadLetterKind,
  type DeadLetterRow,
  type EquityRow,
  equityCopyBuffer,
  type LedgerPosition,
  type LedgerRow,
  ledgerCopyBuffer,
  type PartitionOffset,
  type PositionRow,
  type ProjectionStore,
  type ProjectionTx,
  type RecordKey,
  type SnapshotRow,
  type StoredVault,
} from './projection/index.js';
export * from './queries/index.js';
