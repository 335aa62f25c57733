import type { Command } from '../command.js';
import { migrateCommand } from './migrate.js';

/** Every command of the CLI, in the order `--help` lists them. */
export const commands: Command[] = [migrateCommand];
