export type { Command } from './command.js';
export { type CommandEntry, commands } from './commands/index.js';
