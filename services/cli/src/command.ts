/** One CLI command: `vault-yield <name> [options]` (its name and summary live in commands/index.ts). */
export interface Command {
  /** Full `--help` text: usage, options, environment. */
  help: string;
  run(argv: string[]): Promise<number>;
}
