import { parseArgs } from 'node:util';
import { createLogger, envField } from '@vault-yield/common';
import { createIndexer } from '@vault-yield/indexer';
import { createLogAdmin, createPublisher } from '@vault-yield/log';
import { createProjector } from '@vault-yield/projector';
import { createReader, readerConfigFromEnv } from '@vault-yield/reader';
import { createPgPool, migrate, resetSchema } from '@vault-yield/store';
import {
  deployReferenceStack,
  devChain,
  movePrice,
  playDemoScenario,
  startAnvil,
} from '../../../../infra/chain/index.js';
import { createMarketProjector } from '../../../projector/src/market/index.js';
import type { Command } from '../command.js';
import { demoCatalogue, demoScreen } from '../dev/market.js';
import { ensureDatabase, ensureKafka, type Stop } from '../dev/services.js';

/** The demo's own topics, recreated at every start. */
const TOPICS = {
  records: 'dev-vault-records',
  screen: 'dev-screen-results',
  catalogue: 'dev-strategy-catalogue',
};

const help = `usage: vault-yield dev [--port N] [--no-live]

The main job on one machine (a fresh demo every run: its schema and its dev-* topics are
recreated at start): starts what is missing — Postgres (the machine's cluster), Kafka
(the local KRaft runner; jars fetched with Maven on first use) and a local chain (anvil) —,
deploys the reference contracts, plays the demo scenario, publishes a demo screen and strategy
catalogue, and runs indexer, projector and reader in this process. Prints the reader's URL.
Ctrl-C stops everything it started.

options:
  --port N    reader port (default $PORT or 8080; 0 = any free port)
  --no-live   do not keep moving prices after the demo

environment:
  KAFKA_BROKERS        use this Kafka instead of starting one
  DATABASE_ADMIN_URL   admin URL that may create the database and roles
                       (default postgres://postgres@127.0.0.1:5432/postgres)
  DATABASE_NAME        database (default vault_yield_dev)
  PROJECTION_SCHEMA    projection schema (default vault_yield; dropped and recreated at start)
  LOG_LEVEL            pino level (default info)`;

export const devCommand: Command = {
  help,
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: { port: { type: 'string' }, 'no-live': { type: 'boolean', default: false } },
    });
    const env = process.env;
    const level = envField
      .logLevel()
      .default('info')
      .parse(env.LOG_LEVEL || undefined);
    const log = createLogger({ name: 'dev', level });
    const port = envField.port().parse(values.port ?? env.PORT ?? '8080');
    const schema = envField.identifier().parse(env.PROJECTION_SCHEMA || 'vault_yield');
    const stops: Stop[] = [];
    const stopAll = async () => {
      for (const stop of stops.reverse())
        await stop().catch((err: unknown) => log.error({ err }, 'stop failed'));
    };

    try {
      // Every run plays a fresh chain, so it starts from a fresh projection schema and fresh
      // topics of its own (never the production names).
      const db = await ensureDatabase(log, env);
      const migratePool = createPgPool({ url: db.writerUrl, applicationName: 'vault-yield-dev', max: 1 });
      try {
        await resetSchema(migratePool, schema);
        await migrate(migratePool, schema, db.readerRole);
      } finally {
        await migratePool.end();
      }

      const kafka = await ensureKafka(log, env);
      stops.push(kafka.stop);
      const admin = await createLogAdmin({ brokers: kafka.brokers, clientId: 'vault-yield-dev' });
      try {
        for (const topic of Object.values(TOPICS)) await admin.deleteTopic(topic);
        await admin.ensureTopic({ topic: TOPICS.records, partitions: 8 });
      } finally {
        await admin.close();
      }

      // Automine while the demo plays (fast), then a block every 2 s like a live chain.
      const anvil = await startAnvil();
      stops.push(anvil.stop);
      log.info({ rpcUrl: anvil.rpcUrl }, 'local chain ready');
      const stack = await deployReferenceStack(anvil.rpcUrl);
      const demo = await playDemoScenario(stack);
      await devChain(anvil.rpcUrl).rpc.call('evm_setIntervalMining', [2]);
      log.info({ vaults: demo.vaults.length, events: demo.eventCounts }, 'demo scenario played');

      const indexer = createIndexer({
        rpcUrl: anvil.rpcUrl,
        chainId: anvil.chainId,
        factory: stack.factory,
        startBlock: Number(stack.deploymentBlock),
        kafka: { brokers: kafka.brokers, topic: TOPICS.records },
        databaseUrl: db.writerUrl,
        schema,
        pollIntervalMs: 500,
        logger: log.child({ service: 'indexer' }),
      });
      await indexer.start();
      stops.push(() => indexer.stop());

      const projector = createProjector({
        KAFKA_BROKERS: kafka.brokers,
        DATABASE_URL: db.writerUrl,
        PROJECTION_SCHEMA: schema,
        KAFKA_TOPIC: TOPICS.records,
        CONSUMER_GROUP: 'vault-yield-projector',
        MIGRATE: false,
        logger: log.child({ service: 'projector' }),
      });
      await projector.start();
      stops.push(() => projector.stop());

      const marketPool = createPgPool({
        url: db.writerUrl,
        schema,
        applicationName: 'vault-yield-market',
        max: 2,
      });
      stops.push(() => marketPool.end());
      const market = createMarketProjector({
        brokers: kafka.brokers,
        pool: marketPool,
        logger: log.child({ service: 'market' }),
        screenTopic: TOPICS.screen,
        catalogueTopic: TOPICS.catalogue,
        groupId: 'vault-yield-market',
        statsIntervalMs: 60_000,
        minDailyReturns: 30,
      });
      await market.start();
      stops.push(() => market.stop());
      const now = Date.now();
      for (const [topic, value] of [
        [TOPICS.catalogue, demoCatalogue(now)],
        [TOPICS.screen, demoScreen({ chainId: stack.chainId, tokens: stack.tokens }, now)],
      ] as const) {
        const publisher = await createPublisher({
          brokers: kafka.brokers,
          clientId: 'vault-yield-dev',
          topic,
        });
        await publisher.publishRaw([{ key: topic, value: Buffer.from(JSON.stringify(value)) }]);
        await publisher.close();
      }

      const reader = createReader({
        ...readerConfigFromEnv({
          ...env,
          DATABASE_URL: db.readerUrl,
          PROJECTION_SCHEMA: schema,
          PORT: String(port),
        }),
        logger: log.child({ service: 'reader' }),
      });
      const { url } = await reader.start();
      stops.push(() => reader.stop());

      let live: NodeJS.Timeout | null = null;
      if (!values['no-live']) {
        // Keep the chain alive: a gentle ETH random walk, so equity and ranges keep moving.
        let usd = 2950;
        live = setInterval(() => {
          usd = Math.max(2000, Math.min(4000, usd * (1 + (Math.random() - 0.5) * 0.01)));
          movePrice(stack, stack.tokens.weth, Math.round(usd * 100) / 100).catch((err: unknown) =>
            log.warn({ err }, 'price move failed'),
          );
        }, 10_000);
        stops.push(async () => void (live && clearInterval(live)));
      }

      const first = demo.vaults[0]!.address.toLowerCase();
      console.log(
        [
          '',
          `reader:   ${url}/v1`,
          `docs:     ${url}/docs`,
          `snapshot: ${url}/v1/vault/${first}/snapshot`,
          `events:   ${url}/v1/vault/${first}/events`,
          `vaults:   ${url}/v1/vaults`,
          '',
          'Ctrl-C stops everything this command started.',
        ].join('\n'),
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
        indexer.done.catch((err: unknown) => {
          log.error({ err }, 'indexer halted');
          resolve();
        });
      });
      log.info('stopping');
      await stopAll();
      return 0;
    } catch (err) {
      log.error({ err }, 'dev failed');
      await stopAll();
      return 1;
    }
  },
};
