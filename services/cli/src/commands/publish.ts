import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createConfig, kafkaSecurity } from '@vault-yield/common';
import { screenResult, strategyCatalogue } from '@vault-yield/domain';
import { createLogAdmin, createPublisher } from '@vault-yield/log';
import type { Command } from '../command.js';
import { kafkaSecurityPick, opsEnvSchema } from '../ops/env.js';

const configSchema = opsEnvSchema.pick({
  KAFKA_BROKERS: true,
  ...kafkaSecurityPick,
  SCREEN_TOPIC: true,
  CATALOGUE_TOPIC: true,
});

const kinds = {
  screen: { schema: screenResult, topic: 'SCREEN_TOPIC', key: 'screen' },
  catalogue: { schema: strategyCatalogue, topic: 'CATALOGUE_TOPIC', key: 'catalogue' },
} as const;
type Kind = keyof typeof kinds;

/** Validates a screen or catalogue file; returns the problems as `path: message` lines. */
export function validateStrategyFile(
  kind: Kind,
  text: string,
): { ok: true; value: unknown } | { ok: false; errors: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, errors: [`(file): not valid JSON: ${(e as Error).message}`] };
  }
  const parsed = kinds[kind].schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    errors: parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`),
  };
}

export const publishCommand: Command = {
  help: `usage: vault-yield publish <screen|catalogue> FILE [--dry-run]

Validates FILE (JSON) against the screen-result or strategy-catalogue schema and publishes it to
its Kafka topic. A file that fails validation is refused with each problem's path and message,
and nothing is published (exit 1).

options:
  --dry-run   validate only

environment:
  KAFKA_BROKERS     comma-separated host:port list (required unless --dry-run)
  SCREEN_TOPIC      default screen-results
  CATALOGUE_TOPIC   default strategy-catalogue`,
  async run(argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { 'dry-run': { type: 'boolean', default: false } },
    });
    const [kind, file] = positionals;
    if ((kind !== 'screen' && kind !== 'catalogue') || !file || positionals.length > 2) {
      console.error('usage: vault-yield publish <screen|catalogue> FILE [--dry-run]');
      return 2;
    }
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      console.error(`cannot read ${file}: ${(e as Error).message}`);
      return 1;
    }
    const result = validateStrategyFile(kind, text);
    if (!result.ok) {
      console.error(
        `refused ${file}: not a valid ${kind} (nothing was published)\n${result.errors.map((e) => `  ${e}`).join('\n')}`,
      );
      return 1;
    }
    if (values['dry-run']) {
      console.log(`${file}: valid ${kind}`);
      return 0;
    }
    const config = createConfig(configSchema);
    const topic = config[kinds[kind].topic];
    const client = { brokers: config.KAFKA_BROKERS, clientId: 'vault-yield-cli', ...kafkaSecurity(config) };
    const admin = await createLogAdmin(client);
    try {
      await admin.ensureTopic({ topic, partitions: 1 });
    } finally {
      await admin.close();
    }
    const publisher = await createPublisher({ ...client, topic });
    try {
      await publisher.publishRaw([
        { key: kinds[kind].key, value: Buffer.from(JSON.stringify(result.value)) },
      ]);
    } finally {
      await publisher.close();
    }
    console.log(`published ${kind} ${file} to ${topic}`);
    return 0;
  },
};
