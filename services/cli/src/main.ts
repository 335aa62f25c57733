import { kafkaSecurity, redactText } from '@vault-yield/common';
import { commands } from './commands/index.js';
import { processEnvSchema } from './config.js';
import { commandContext, readEnv } from './context.js';
import { describeFailure } from './ops/failure.js';

/** The service's version: the root package.json's (one version for the repository). */
async function version(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const pkg = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

function usage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'usage: vault-yield <command> [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `vault-yield <command> --help` for the options of one command; `vault-yield --version` prints the version.',
    'A command that fails prints one line (its cause and cure) and exits 1 (2: a value or option refused);',
    '`--debug` (any command) or LOG_LEVEL=debug prints the stack after it, redacted.',
  ].join('\n');
}

/** The stacks of an error and of its causes (--debug), outermost first. */
function stacks(err: unknown): string[] {
  const out: string[] = [];
  for (let e = err; e instanceof Error && out.length < 6; e = e.cause)
    out.push(`${out.length === 0 ? '' : 'caused by: '}${e.stack ?? e.message}`);
  return out;
}

/** How a run ended: its exit code, and whether it failed (a failed run does not wait on open sockets). */
interface Outcome {
  code: number;
  failed: boolean;
}

async function main(argv: string[]): Promise<Outcome> {
  const done = (code: number): Outcome => ({ code, failed: false });
  const debug = argv.includes('--debug') || ['debug', 'trace'].includes(process.env.LOG_LEVEL ?? '');
  const [name, ...rest] = argv.filter((a) => a !== '--debug');
  if (name === '--version' || name === '-v' || name === 'version') {
    console.log(`vault-yield ${await version()}`);
    return done(0);
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return done(name ? 0 : 2);
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    console.error(`unknown command: ${name}\n\n${usage()}`);
    return done(2);
  }
  const command = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.help);
    return done(0);
  }
  try {
    // The environment, read once: what every command shares is checked here, whatever the
    // command; a command's own variables when it first asks for its context.
    const env = process.env;
    const shared = readEnv(env, processEnvSchema);
    // Every Kafka client a command creates connects with KAFKA_SASL_* / KAFKA_SSL*. A one-shot
    // command reports a broker that does not answer in seconds, not after the client's whole
    // retry schedule; `dev` runs services, which ride a broker's restart out.
    const budget = shared.KAFKA_CONNECT_BUDGET_MS;
    const context = commandContext(command, {
      env,
      security: kafkaSecurity(shared),
      connectBudgetMs: name === 'dev' || budget === 0 ? null : budget,
    });
    return done(await command.run(rest, context));
  } catch (err) {
    // Whatever a command throws: one line naming the cause (and the cure), redacted; no stack
    // unless asked for. A value refused is a usage error (2), anything else a failure (1).
    const failure = describeFailure(err, process.env);
    console.error(`vault-yield ${name}: ${failure.message}`);
    if (debug) for (const stack of stacks(err)) console.error(redactText(stack));
    return { code: failure.exitCode, failed: failure.exitCode === 1 };
  }
}

const outcome = await main(process.argv.slice(2));
process.exitCode = outcome.code;
// A command that failed may leave a client connecting (a pool, a broker's retries): its line is
// written, so the process ends now instead of waiting on them.
if (outcome.failed) process.exit(outcome.code);
