export {
  appliedVersions,
  latestVersion,
  type MigrateResult,
  type Migration,
  migrate,
  migrations,
} from './migrations/index.js';
export { createPgPool, ident, type PgPoolConfig, type Pool, type PoolClient } from './pool/index.js';
