/**
 * The CLI's configuration schemas, for the README's generated configuration table and the tests
 * that hold compose to them (scripts/config-table.ts, test/compose.test.ts).
 */

export { webhooksEnvSchema } from '@vault-yield/webhooks';
export { auditEnvSchema } from './commands/audit.js';
export { migrateConfigSchema } from './commands/migrate.js';
export { reindexEnvSchema } from './commands/reindex.js';
export { republishEnvSchema } from './commands/republish.js';
export { opsEnvSchema } from './ops/env.js';
