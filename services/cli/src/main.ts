import { ConfigError, createConfig, kafkaSecurity, kafkaSecurityShape } from '@vault-yield/common';
import { setDefaultLogSecurity } from '@vault-yield/log';
import { z } from 'zod';
import { commands } from './commands/index.js';

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
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    console.log(`vault-yield ${await version()}`);
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name ? 0 : 2;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    console.error(`unknown command: ${name}\n\n${usage()}`);
    return 2;
  }
  const command = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.help);
    return 0;
  }
  try {
    // Every Kafka client a command creates connects with KAFKA_SASL_* / KAFKA_SSL* (validated here).
    setDefaultLogSecurity(kafkaSecurity(createConfig(z.object(kafkaSecurityShape))));
    return await command.run(rest);
  } catch (err) {
    if (err instanceof ConfigError || (err instanceof TypeError && 'code' in err)) {
      console.error(`vault-yield ${name}: ${err.message}`);
      return 2;
    }
    // A value some schema refused without naming its option: still one line, never a stack.
    if (err instanceof z.ZodError) {
      console.error(
        `vault-yield ${name}: ${err.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; ')}`,
      );
      return 2;
    }
    throw err;
  }
}

process.exitCode = await main(process.argv.slice(2));
