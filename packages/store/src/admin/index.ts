/**
 * Operator-side store functions: projection schema lifecycle (build, finalize, drop), the live
 * switch of the reader's views schema, table checksums and diffs, and status reads.
 */
export {
  CHECKSUM_EXCLUDED_COLUMNS,
  CHECKSUM_SKIPPED_TABLES,
  type CompareOptions,
  comparedTable,
  compareSchemas,
  schemaChecksums,
  type TableChecksum,
  type TableDiff,
  tableChecksum,
  withSnapshot,
} from './checksum.js';
export {
  type DeferredIndex,
  dropProjectionSchema,
  type FinalizeReport,
  finalizeBuildSchema,
  type PrepareOptions,
  prepareBuildSchema,
  schemaExists,
  schemaTables,
  schemaVersion,
  schemaWriters,
  viewReaders,
  withRoles,
} from './lifecycle.js';
export {
  ADMIN_TABLES,
  type BuildPatch,
  type BuildPurpose,
  type BuildRecord,
  type BuildState,
  ensureAdminTables,
  getBuild,
  type LiveRecord,
  listBuilds,
  liveRecord,
  markBuild,
  type NewBuild,
  recordBuild,
} from './meta.js';
export {
  DEFAULT_DROP_LOCK_TIMEOUT_MS,
  DEFAULT_QUIET_MS,
  type DropOutcome,
  dropSchemaUnlessBusy,
  type RetireDecision,
  type RetireOptions,
  retireSchemas,
  type SchemaActivity,
  type SchemaLocker,
  schemaActivity,
  schemaUses,
} from './retire.js';
export {
  appliedCount,
  type DeadLetterCount,
  type DeadLetterEntry,
  deadLetterCounts,
  type HeldVaultRow,
  heldVaultRows,
  type IndexerCheckpointRow,
  indexerCheckpoints,
  listDeadLetters,
  projectionFoldVersion,
  type StalePriceRow,
  type StoredOffsetRow,
  stalePriceRows,
  storedOffsetRows,
} from './status.js';
export {
  LIVE_CHANNEL,
  liveSchema,
  liveSchemaProblem,
  type SwitchOptions,
  type SwitchResult,
  switchLive,
  viewedTable,
} from './switch.js';
