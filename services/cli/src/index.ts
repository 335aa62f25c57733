export type { Command } from './command.js';
export { commands } from './commands/index.js';
