import { parseArgs } from 'node:util';
import { envField } from '@vault-yield/common';
import {
  createPgPool,
  MigrationChecksumError,
  type MigrationStatus,
  migrate,
  migrationStatus,
} from '@vault-yield/store';
import type { Command } from '../command.js';
import { migrateConfigSchema } from '../config.js';
import { ddlUrl, optionValue } from '../ops/env.js';

/** The status as an operator reads it: one line per migration, then what to do about it. */
export function formatMigrationStatus(status: MigrationStatus): string {
  const width = Math.max(0, ...status.entries.map((e) => e.file.length));
  const lines = [`schema ${status.schema}: ${status.applied} applied, ${status.pending} pending`];
  for (const e of status.entries) {
    const when = e.appliedAt ? e.appliedAt.toISOString() : ''.padEnd(24);
    const sum = e.checksum ? `sha256 ${e.checksum.slice(0, 12)}` : `sha256 ${'-'.repeat(12)}`;
    const state =
      e.checksumState === null
        ? ''
        : {
            match: 'checksum ok',
            changed: 'CHANGED since applied',
            unrecorded: 'checksum not recorded (applied before checksums were kept)',
            'no-file': 'no such file in this build',
          }[e.checksumState];
    lines.push(`  ${e.file.padEnd(width)}  ${e.state.padEnd(7)}  ${when}  ${sum}  ${state}`.trimEnd());
  }
  if (status.changed.length)
    lines.push(
      `changed since applied: ${status.changed.join(', ')}; \`vault-yield migrate\` refuses this schema until ${status.changed.length > 1 ? 'they are' : 'it is'} restored as applied (put a change in a new migration)`,
    );
  const unrecorded = status.entries.filter((e) => e.checksumState === 'unrecorded').length;
  if (unrecorded)
    lines.push(
      `the next \`vault-yield migrate\` records the checksums of ${unrecorded} migrations applied before them`,
    );
  if (status.pending && !status.changed.length)
    lines.push('run `vault-yield migrate` to apply the pending ones');
  return lines.join('\n');
}

export const migrateCommand: Command<typeof migrateConfigSchema> = {
  env: migrateConfigSchema,
  log: { name: 'cli', stdout: true },
  help: `usage: vault-yield migrate [--schema NAME] [--status [--json]]

Applies the versioned migrations of packages/store to the projection schema, in one
transaction under an advisory lock. Services never migrate on start: run this first.
The sha256 of each applied file is kept in schema_migrations.checksum (migrations applied
by a build before checksums get theirs at the first run); a file changed since it was
applied is refused, naming it, and nothing is applied (exit 1).

options:
  --schema NAME   schema to migrate (default: $PROJECTION_SCHEMA or vault_yield)
  --status        list each migration, applied or pending, with its checksum state
                  (ok, CHANGED, not recorded, no such file); changes nothing; exit 0
  --json          with --status: one JSON document on stdout

Run it as the migrator role (MIGRATE_DATABASE_URL): it owns the schema and its tables, and
grants DML to WRITER_ROLE and SELECT to READER_ROLE on them, now and by default privileges
on what later migrations create. The runtime writer has no DDL.

environment:
  MIGRATE_DATABASE_URL  migrator-role URL (default: DATABASE_URL); direct or session pooling
  DATABASE_URL          used when MIGRATE_DATABASE_URL is unset (required)
  PROJECTION_SCHEMA     default schema name
  WRITER_ROLE           role granted select, insert, update, delete on the schema (optional)
  READER_ROLE           role granted read-only access to the schema (optional)`,
  async run(argv, context) {
    const { values } = parseArgs({
      args: argv,
      options: {
        schema: { type: 'string' },
        status: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    const { config, log } = context();
    const schema =
      values.schema === undefined
        ? config.PROJECTION_SCHEMA
        : optionValue('schema', envField.identifier(), values.schema);
    const pool = createPgPool({ url: ddlUrl(config), applicationName: 'vault-yield-migrate', max: 1 });
    try {
      if (values.status) {
        const status = await migrationStatus(pool, schema);
        console.log(values.json ? JSON.stringify(status, null, 2) : formatMigrationStatus(status));
        return 0;
      }
      const result = await migrate(
        pool,
        schema,
        config.READER_ROLE,
        config.WRITER_ROLE ? { writerRole: config.WRITER_ROLE } : {},
      );
      log.info(result, result.applied.length ? 'migrations applied' : 'schema is current');
      return 0;
    } catch (err) {
      if (!(err instanceof MigrationChecksumError)) throw err;
      console.error(`vault-yield migrate: ${err.message}`);
      return 1;
    } finally {
      await pool.end();
    }
  },
};
