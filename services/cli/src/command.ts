import type { z } from 'zod';
import type { CliContext, ContextSpec } from './context.js';

/**
 * One CLI command: `vault-yield <name> [options]` (its name and summary live in commands/index.ts).
 * Its `env` is its pick of the cli's one schema (config.ts); `run` gets its context from main.ts.
 */
export interface Command<S extends z.ZodObject = z.ZodObject> extends ContextSpec<S> {
  /** Full `--help` text: usage, options, environment. */
  help: string;
  /** `context()`: the process's context, made on the first call (the env read then), the same after. */
  run(argv: string[], context: () => CliContext<z.output<S>>): Promise<number>;
}
