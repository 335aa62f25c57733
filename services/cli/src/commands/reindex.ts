import { parseArgs } from 'node:util';
import { createChainClient, getHeadNumber } from '@vault-yield/chain';
import { createConfig, envField } from '@vault-yield/common';
import { createIndexer } from '@vault-yield/indexer';
import { createPgPool, migrate } from '@vault-yield/store';
import { z } from 'zod';
import type { Command } from '../command.js';
import { cliLogger, optionValue } from '../ops/env.js';
import { createProgress } from '../ops/progress.js';
import { rebuildCommand } from './rebuild.js';

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'expected an address: 0x followed by 40 hex digits')
  .transform((a) => a.toLowerCase() as `0x${string}`);

const reindexEnvSchema = z.object({
  DATABASE_URL: envField.postgresUrl(),
  KAFKA_BROKERS: envField.brokers(),
  RPC_URL: envField.httpUrl(),
  FACTORY_ADDRESS: address,
  CHAIN_ID: envField.int(1).optional(),
  CONFIRMATIONS: envField.int(0, 10_000).default(0),
  MAX_BLOCK_RANGE: envField.int(1, 10_000_000).default(10_000),
  LOG_LEVEL: envField.logLevel().default('warn'),
});

/** The default checkpoint namespace of a topic: stable, so a re-run resumes the same one. */
export function namespaceFor(topic: string): string {
  const slug = topic
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return `vault_yield_idx_${slug}`.slice(0, 63);
}

export const reindexCommand: Command = {
  help: `usage: vault-yield reindex --topic NEW [--namespace NAME] [--partitions N] [--start-block N]
                         [--no-rebuild] [rebuild options: --schema, --group, --dry-run, --follow, …]

Runs the indexer from the factory's deployment block (or --start-block) up to the chain head as
it is when the command starts, publishing into the new topic NEW, with a fresh checkpoint
namespace (a schema of its own, so the live indexer's checkpoint is untouched). Then runs
\`vault-yield rebuild --topic NEW\` (with the rebuild options given), which folds NEW into a fresh
projection schema and switches the reader to it. Interrupted? Run the same command again: the
indexer resumes from the namespace's checkpoint (republishing at most one batch: duplicates are
harmless), and the rebuild resumes its recorded build.

Afterwards, move the live indexer to the new topic and namespace and the projector to the new
schema (the command prints the variables).

options:
  --topic NEW          topic to write (required; created with --partitions if missing)
  --namespace NAME     indexer checkpoint schema (default vault_yield_idx_<topic>)
  --partitions N       partitions of the new topic (default 12)
  --start-block N      first block (default: the factory's deployment block)
  --no-rebuild         stop after the log is rebuilt

environment:
  DATABASE_URL, KAFKA_BROKERS, RPC_URL, FACTORY_ADDRESS (required); CHAIN_ID; CONFIRMATIONS (0);
  MAX_BLOCK_RANGE; and those of rebuild`,
  async run(argv) {
    const { values, tokens } = parseArgs({
      args: argv,
      tokens: true,
      options: {
        topic: { type: 'string' },
        namespace: { type: 'string' },
        partitions: { type: 'string', default: '12' },
        'start-block': { type: 'string' },
        'no-rebuild': { type: 'boolean', default: false },
        schema: { type: 'string' },
        group: { type: 'string' },
        'dry-run': { type: 'boolean' },
        follow: { type: 'boolean' },
        'retire-old': { type: 'boolean' },
        grace: { type: 'string' },
        'no-market': { type: 'boolean' },
        logged: { type: 'boolean' },
        'all-indexes': { type: 'boolean' },
      },
    });
    if (!values.topic) {
      console.error('usage: vault-yield reindex --topic NEW (see --help)');
      return 2;
    }
    const topic = optionValue('topic', envField.topic(), values.topic);
    const namespace = optionValue(
      'namespace',
      envField.identifier(),
      values.namespace ?? namespaceFor(topic),
    );
    const partitions = optionValue('partitions', envField.int(1, 1024), values.partitions);
    const startBlock =
      values['start-block'] === undefined
        ? undefined
        : optionValue('start-block', envField.int(0), values['start-block']);
    const env = createConfig(reindexEnvSchema);
    const log = cliLogger('reindex', env.LOG_LEVEL);

    // A fresh checkpoint namespace: the migrations create indexer_checkpoint & co there.
    const pool = createPgPool({ url: env.DATABASE_URL, applicationName: 'vault-yield-reindex', max: 1 });
    try {
      await migrate(pool, namespace);
    } finally {
      await pool.end();
    }
    const head = await getHeadNumber(
      createChainClient({ rpcUrl: env.RPC_URL, chainId: env.CHAIN_ID, cacheTime: 0 }),
    );
    const target = Math.max(0, head - env.CONFIRMATIONS);
    const indexer = createIndexer({
      rpcUrl: env.RPC_URL,
      chainId: env.CHAIN_ID,
      factory: env.FACTORY_ADDRESS,
      startBlock,
      confirmations: env.CONFIRMATIONS,
      kafka: { brokers: env.KAFKA_BROKERS, topic, partitions },
      databaseUrl: env.DATABASE_URL,
      schema: namespace,
      maxBlockRange: env.MAX_BLOCK_RANGE,
      logger: log,
    });
    const progress = createProgress(`reindex ${topic}`);
    await indexer.start();
    const ticker = setInterval(() => {
      const s = indexer.status();
      progress.update(Math.max(0, s.checkpoint.blockNumber), target);
    }, 1000);
    try {
      await indexer.waitFor(target);
    } finally {
      clearInterval(ticker);
      await indexer.stop();
    }
    const s = indexer.status();
    progress.finish(
      `log rebuilt to block ${s.checkpoint.blockNumber}: ${s.recordsPublished} records published into ${topic} (${s.vaults} vaults)`,
    );
    console.log(`reindexed ${topic} to block ${s.checkpoint.blockNumber} (namespace ${namespace})`);
    console.log(
      `next: run the indexer with KAFKA_TOPIC=${topic} PROJECTION_SCHEMA=${namespace} (its checkpoint namespace)`,
    );
    if (values['no-rebuild']) return 0;

    // Pass the rebuild options through as given.
    const passthrough: string[] = [];
    const rebuildFlags = new Set([
      'schema',
      'group',
      'dry-run',
      'follow',
      'retire-old',
      'grace',
      'no-market',
      'logged',
    ]);
    for (const t of tokens ?? []) {
      if (t.kind !== 'option' || !rebuildFlags.has(t.name)) continue;
      passthrough.push(`--${t.name}`);
      if (t.value !== undefined) passthrough.push(t.value);
    }
    return rebuildCommand.run(['--topic', topic, ...passthrough]);
  },
};
