import type { Command } from '../command.js';
import { devCommand } from './dev.js';
import { migrateCommand } from './migrate.js';
import { publishCommand } from './publish.js';
import { rebuildCommand } from './rebuild.js';
import { reindexCommand } from './reindex.js';
import { statusCommand } from './status.js';
import { verifyCommand } from './verify.js';

/** Every command of the CLI, in the order `--help` lists them. */
export const commands: Command[] = [
  devCommand,
  migrateCommand,
  publishCommand,
  rebuildCommand,
  verifyCommand,
  reindexCommand,
  statusCommand,
];
