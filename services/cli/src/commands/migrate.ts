import { parseArgs } from 'node:util';
import { createConfig, createLogger, envField } from '@vault-yield/common';
import { createPgPool, migrate } from '@vault-yield/store';
import { z } from 'zod';
import type { Command } from '../command.js';

export const migrateConfigSchema = z.object({
  DATABASE_URL: envField.postgresUrl(),
  PROJECTION_SCHEMA: envField.identifier().default('vault_yield'),
  READER_ROLE: envField.identifier().optional(),
  LOG_LEVEL: envField.logLevel().default('info'),
});

export const migrateCommand: Command = {
  help: `usage: vault-yield migrate [--schema NAME]

Applies the versioned migrations of packages/store to the projection schema, in one
transaction under an advisory lock. Services never migrate on start: run this first.

options:
  --schema NAME   schema to migrate (default: $PROJECTION_SCHEMA or vault_yield)

environment:
  DATABASE_URL        writer-role connection URL (required)
  PROJECTION_SCHEMA   default schema name
  READER_ROLE         role granted read-only access to the schema (optional)`,
  async run(argv) {
    const { values } = parseArgs({ args: argv, options: { schema: { type: 'string' } } });
    const config = createConfig(migrateConfigSchema);
    const log = createLogger({ name: 'cli', level: config.LOG_LEVEL });
    const schema = envField.identifier().parse(values.schema ?? config.PROJECTION_SCHEMA);
    const pool = createPgPool({ url: config.DATABASE_URL, applicationName: 'vault-yield-migrate', max: 1 });
    try {
      const result = await migrate(pool, schema, config.READER_ROLE);
      log.info(result, result.applied.length ? 'migrations applied' : 'schema is current');
      return 0;
    } finally {
      await pool.end();
    }
  },
};
