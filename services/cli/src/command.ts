/** One CLI command: `vault-yield <name> [options]`. */
export interface Command {
  name: string;
  summary: string;
  /** Full `--help` text: usage, options, environment. */
  help: string;
  run(argv: string[]): Promise<number>;
}
