import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { CONFIG_DEFAULTS, createContext, envField, securityOf } from '@vault-yield/common';
import {
  ANVIL_CHAIN_ID,
  type AnvilInstance,
  createVault,
  DEMO_STEPS,
  type DemoResult,
  deployReferenceStack,
  devChain,
  keepFeedsFresh,
  movePrice,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
} from '@vault-yield/devstack/chain';
import { vaultId } from '@vault-yield/domain';
import { followLiveIndexer } from '@vault-yield/indexer';
import { createLogAdmin, createPublisher } from '@vault-yield/log';
import { followLiveProjections } from '@vault-yield/projector';
import { createReader, readerConfigFromEnv } from '@vault-yield/reader';
import {
  createPgPool,
  dropProjectionSchema,
  listBuilds,
  migrate,
  resetSchema,
  STREAM_CHANNEL,
  switchLive,
  webhookSecretKeys,
} from '@vault-yield/store';
import { createWebhookDeliverer, listenWakeUp } from '@vault-yield/webhooks';
import type { Command } from '../command.js';
import { devEnvSchema } from '../config.js';
import { ensureDatabase, ensureKafka, type Stop } from '../dev/services.js';
import { demoCatalogue, demoScreen } from '../dev/strategy.js';

/**
 * The demo's own topics, recreated at every start, and its consumer groups. DEV_KAFKA_PREFIX
 * (default `dev`) keeps two demos on one broker apart: each deletes its topics at start.
 */
function kafkaNames(prefix: string) {
  const own = prefix !== 'dev';
  return {
    records: `${prefix}-vault-records`,
    screen: `${prefix}-screen-results`,
    catalogue: `${prefix}-strategy-catalogue`,
    projectorGroup: own ? `${prefix}-projector` : CONFIG_DEFAULTS.projectorGroup,
    marketGroup: own ? `${prefix}-market` : 'vault-yield-market',
  };
}

const help = `usage: vault-yield dev [--port N] [--no-live] [--one-chain]

The main job on one machine (a fresh demo every run: its schema and its dev-* topics are
recreated at start): starts what is missing — Postgres (the machine's cluster), Kafka
(the local KRaft runner; jars fetched with Maven on first use) and two local chains (anvil,
chain ids 31337 and 31338, the same deployer: the factory and the demo's vaults have the same
addresses on both) —, deploys the reference contracts on each, plays the demo scenario on each
(the second chain's clock steps differ, and it has one vault more), publishes a demo screen and
strategy catalogue, and runs one indexer per chain, the projector and the reader in this
process. Prints the dashboard's URL first, then the API's and the chains'.
Ctrl-C stops everything it started.

options:
  --port N     reader port (default $PORT or 8080; 0 = any free port)
  --no-live    do not keep moving prices after the demo
  --one-chain  one local chain (31337) only, as before #45

environment:
  KAFKA_BROKERS        use this Kafka instead of starting one
  DATABASE_ADMIN_URL   admin URL that may create the database and roles
                       (default postgres://postgres@127.0.0.1:5432/postgres)
  DATABASE_NAME        database (default vault_yield_dev)
  PROJECTION_SCHEMA    projection schema (default vault_yield; dropped and recreated at start)
  VIEWS_SCHEMA         the reader's views schema (default vault_yield_api; recreated at start,
                       pointed at PROJECTION_SCHEMA; \`vault-yield rebuild\` on this database
                       switches it, and the demo's projector follows the switch)
  DEV_KAFKA_PREFIX     prefix of the demo's topics and groups (default dev)
  LOG_LEVEL            pino level (default info)`;

/**
 * A ready-to-paste deposit into a demo vault: `eth_sendTransaction` of `Vault.deposit(token,
 * amount)` from its owner (anvil's accounts are unlocked: no key needed), with curl.
 */
export function depositCommand(
  rpcUrl: string,
  owner: string,
  vault: string,
  token: string,
  amount: bigint,
): string {
  const word = (hex: string) => hex.replace(/^0x/, '').padStart(64, '0');
  // deposit(address,uint256)
  const data = `0x47e7ef24${word(token)}${word(amount.toString(16))}`;
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'eth_sendTransaction',
    params: [{ from: owner, to: vault, data }],
  });
  return `curl -s -H 'content-type: application/json' -d '${body}' ${rpcUrl}`;
}

/** The operator's environment for this stack as `NAME=value …` (the demo's roles have no password). */
export function operatorEnv(vars: Record<string, string>): string {
  return Object.entries(vars)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

/** How long `dev` waits for each part it started to stop. */
const STOP_TIMEOUT_MS = 15_000;

/** The demo's second chain: anvil under another chain id, the same deployer key. */
export const SECOND_CHAIN_ID = 31_338;

/** One local chain of the demo: its node, the reference contracts on it and the demo played there. */
interface DemoChain {
  chainId: number;
  anvil: AnvilInstance;
  stack: ReferenceStack;
  demo: DemoResult;
}

/**
 * A local chain with the reference stack and the demo scenario. The first chain plays the demo
 * as before; the others step their clock by another amount (other timestamps, so other fees and
 * returns under the same vault addresses) and get one vault of their own (an address only they have).
 */
async function playChain(
  anvil: AnvilInstance,
  first: boolean,
  log: { info: (o: object, msg: string) => void },
): Promise<DemoChain> {
  const { chainId } = anvil;
  const stack = await deployReferenceStack(anvil.rpcUrl);
  const demo = await playDemoScenario(stack, {
    ...(first ? {} : { stepSeconds: 4 * 3600 }),
    onStep: (n) => log.info({ chainId, step: n, of: DEMO_STEPS }, 'demo scenario'),
  });
  if (!first) {
    const owner = stack.accounts.owners[0]!;
    const pool = stack.pools[stack.pools.length - 1]!;
    const v = await createVault(stack, owner, pool, `chain ${chainId} only`);
    demo.vaults.push({ address: v.address, owner, pool: pool.address, strategy: `chain ${chainId} only` });
  }
  await devChain(anvil.rpcUrl).rpc.call('evm_setIntervalMining', [2]);
  return { chainId, anvil, stack, demo };
}

export const devCommand: Command<typeof devEnvSchema> = {
  env: devEnvSchema,
  log: { name: 'dev', stdout: true, format: true },
  help,
  async run(argv, context) {
    const { values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        'no-live': { type: 'boolean', default: false },
        'one-chain': { type: 'boolean', default: false },
      },
    });
    const env = process.env;
    const ctx = context();
    const { config: devEnv, log } = ctx;
    const port = values.port === undefined ? devEnv.PORT : envField.port().parse(values.port);
    const schema = devEnv.PROJECTION_SCHEMA;
    const views = devEnv.VIEWS_SCHEMA;
    const TOPICS = kafkaNames(devEnv.DEV_KAFKA_PREFIX);
    const stops: [name: string, stop: Stop][] = [];
    // Each part gets STOP_TIMEOUT_MS to stop (a part waiting on a dead peer — an RPC retry to a
    // chain that died — must not hang Ctrl-C); a second Ctrl-C exits at once.
    const stopAll = async (): Promise<boolean> => {
      let clean = true;
      const force = () => {
        log.warn('second interrupt: exiting without waiting');
        process.exit(130);
      };
      process.once('SIGINT', force);
      for (const [name, stop] of stops.reverse()) {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<'timeout'>((res) => {
          timer = setTimeout(() => res('timeout'), STOP_TIMEOUT_MS);
        });
        const outcome = await Promise.race([stop().then(() => 'stopped' as const), timedOut]).catch(
          (err: unknown) => {
            log.error({ err, part: name }, 'stop failed');
            return 'failed' as const;
          },
        );
        clearTimeout(timer);
        if (outcome === 'stopped') log.info({ part: name }, `${name} stopped`);
        else if (outcome === 'timeout') {
          clean = false;
          log.error({ part: name, timeoutMs: STOP_TIMEOUT_MS }, `${name} did not stop in time; left behind`);
        }
      }
      process.removeListener('SIGINT', force);
      return clean;
    };
    // A part left behind keeps handles open: exit instead of hanging on them.
    const finish = async (code: number): Promise<number> => {
      if (!(await stopAll())) process.exit(code || 1);
      return code;
    };

    try {
      // Every run plays a fresh chain, so it starts from a fresh projection schema and fresh
      // topics of its own (never the production names).
      const db = await ensureDatabase(log, {
        adminUrl: devEnv.DATABASE_ADMIN_URL,
        name: devEnv.DATABASE_NAME,
      });
      // The last run's schemas are dropped as the admin: a database of a version before the
      // migrator role holds schemas the writer owns.
      const adminPool = createPgPool({ url: db.adminDbUrl, applicationName: 'vault-yield-dev', max: 1 });
      const migratePool = createPgPool({ url: db.migratorUrl, applicationName: 'vault-yield-dev', max: 1 });
      try {
        // The views of the last run pointed at its schemas (the demo's, or a rebuild's of topics
        // deleted since): a fresh demo gets fresh views, pointed at its fresh schema, so neither
        // the reader nor `status` ever sees a dead schema as live. The last run's builds go too.
        for (const b of await listBuilds(adminPool, views))
          if (b.schema !== schema) await dropProjectionSchema(adminPool, b.schema);
        await resetSchema(adminPool, views);
        await resetSchema(adminPool, schema);
        // As deployed: the migrator migrates and switches, granting the writer its DML and the
        // reader its reads; indexer, projector and deliverer then run as the writer.
        await migrate(migratePool, schema, db.readerRole, { writerRole: db.writerRole });
        await switchLive(migratePool, {
          viewsSchema: views,
          target: schema,
          readerRole: db.readerRole,
          writerRole: db.writerRole,
        });
      } finally {
        await adminPool.end();
        await migratePool.end();
      }

      const kafka = await ensureKafka(log, devEnv.KAFKA_BROKERS);
      stops.push(['kafka', kafka.stop]);
      // KAFKA_BROKERS' SASL/TLS (none for the broker it started); no connect budget: services.
      const security = securityOf(ctx.kafka);
      const connection = { brokers: kafka.brokers, ...security, connectBudgetMs: null };
      /** A part's context: a component of the dev logger, its own registry (its /metrics as deployed). */
      const part = (component: string) =>
        createContext({
          service: 'dev',
          config: devEnv,
          log: log.child({ component }),
          kafka: connection,
        });
      const admin = await createLogAdmin({ ...connection, clientId: 'vault-yield-dev' });
      try {
        for (const topic of [TOPICS.records, TOPICS.screen, TOPICS.catalogue]) await admin.deleteTopic(topic);
        await admin.ensureTopic({ topic: TOPICS.records, partitions: 8 });
      } finally {
        await admin.close();
      }

      // Automine while the demo plays (fast), then a block every 2 s like a live chain. Two chains
      // (#45): each its own anvil, contracts, demo, feeds and indexer; one topic, one projector.
      const chainIds = values['one-chain'] ? [ANVIL_CHAIN_ID] : [ANVIL_CHAIN_ID, SECOND_CHAIN_ID];
      const anvils: AnvilInstance[] = [];
      for (const chainId of chainIds) {
        const anvil = await startAnvil({ chainId });
        anvils.push(anvil);
        stops.push([`chain ${chainId}`, anvil.stop]);
        log.info({ chainId, rpcUrl: anvil.rpcUrl }, 'local chain ready');
      }
      log.info(
        { chains: chainIds },
        'deploying the reference contracts (tokens, feeds, Uniswap v3 pools, vault factory)',
      );
      log.info({ steps: DEMO_STEPS, chains: chainIds }, 'playing the demo scenario');
      const chains = await Promise.all(anvils.map((a, i) => playChain(a, i === 0, log)));
      for (const c of chains)
        log.info(
          { chainId: c.chainId, vaults: c.demo.vaults.length, events: c.demo.eventCounts },
          'demo scenario played',
        );
      const [main] = chains as [DemoChain, ...DemoChain[]];
      const { anvil, stack, demo } = main;
      for (const c of chains) {
        // The demo's feeds beat like live ones (a fresh round before half a heartbeat passes), so
        // no price reads stale unless a feed really stops.
        const feedLog = log.child({ component: 'feeds', chainId: c.chainId });
        const feeds = keepFeedsFresh(c.stack, {
          logger: (lvl, msg, { error, ...f }) =>
            feedLog[lvl]({ ...f, ...(error ? { err: error } : {}) }, msg),
        });
        stops.push([`feeds ${c.chainId}`, () => feeds.stop()]);
      }

      // One indexer per chain (DESIGN §8: a chain's node down or reorganising never delays
      // another), each with its own RPC, checkpoint and metrics registry, all on the one topic.
      // Each follows the live log of the views: after `vault-yield reindex` it publishes the new
      // topic from the reindex's checkpoint namespace.
      const indexers = chains.map((c) =>
        followLiveIndexer(
          {
            rpcUrl: c.anvil.rpcUrl,
            // anvil serves WebSocket on its HTTP port: blocks wake the indexer as they land.
            rpcWsUrl: c.anvil.rpcUrl.replace(/^http/, 'ws'),
            chainId: c.chainId,
            factory: c.stack.factory,
            startBlock: Number(c.stack.deploymentBlock),
            kafka: { brokers: kafka.brokers, topic: TOPICS.records },
            databaseUrl: db.writerUrl,
            schema,
            pollIntervalMs: 500,
          },
          { viewsSchema: views, intervalMs: 2_000 },
          part(`indexer-${c.chainId}`),
        ),
      );
      for (const [i, indexer] of indexers.entries()) {
        await indexer.start();
        stops.push([`indexer ${chains[i]!.chainId}`, () => indexer.stop()]);
      }

      // Follows the live schema of the views: after `vault-yield rebuild` it folds into the new one.
      const projectorCtx = part('projector');
      const projections = followLiveProjections(
        {
          kafka: {
            brokers: kafka.brokers,
            topic: TOPICS.records,
            consumerGroup: TOPICS.projectorGroup,
            security,
          },
          databaseUrl: db.writerUrl,
          schema,
          migrate: false,
          logger: projectorCtx.log,
          strategy: {
            screenTopic: TOPICS.screen,
            catalogueTopic: TOPICS.catalogue,
            groupId: TOPICS.marketGroup,
            statsIntervalMs: 60_000,
            logger: log.child({ component: 'market' }),
          },
        },
        { viewsSchema: views, intervalMs: 2_000 },
        projectorCtx,
      );
      stops.push(['projections', () => projections.stop()]);
      await projections.started;
      const now = Date.now();
      for (const [topic, value] of [
        [TOPICS.catalogue, demoCatalogue(now)],
        [TOPICS.screen, demoScreen({ chainId: stack.chainId, tokens: stack.tokens }, now)],
      ] as const) {
        const publisher = await createPublisher({ ...connection, clientId: 'vault-yield-dev', topic });
        await publisher.publishRaw([{ key: topic, value: Buffer.from(JSON.stringify(value)) }]);
        await publisher.close();
      }

      const readerConfig = readerConfigFromEnv({
        ...env,
        DATABASE_URL: db.readerUrl,
        // The views, like a deployment's reader: a rebuild's switch reaches it.
        PROJECTION_SCHEMA: views,
        PORT: String(port),
        // Freshness: the demo topic's high watermarks, the demo indexer's checkpoint (after a
        // reindex, those of the live build's log).
        KAFKA_BROKERS: kafka.brokers.join(','),
        KAFKA_TOPIC: TOPICS.records,
        INDEXER_SCHEMA: schema,
      });
      const reader = createReader(readerConfig, part('reader'));
      const { url } = await reader.start();
      stops.push(['reader', () => reader.stop()]);

      // Callbacks: endpoints registered with `vault-yield webhooks add` (DATABASE_URL of this
      // demo database) are delivered to while it runs; the demo schema, and its endpoints, are
      // recreated at every start.
      // It runs as the webhooks role (the only one, with the migrator, that reads the webhook
      // tables) with a key of this run's own sealing the signing secrets (in a file named below).
      const webhookKey = randomBytes(32).toString('base64');
      // The key never reaches the output: a file only this user reads, named by the webhooks: line.
      const keyFile = join(await mkdtemp(join(tmpdir(), 'vault-yield-dev-')), 'webhook-secret-key');
      await writeFile(keyFile, `${webhookKey}\n`, { mode: 0o600 });
      stops.push(['webhook key file', () => rm(dirname(keyFile), { recursive: true, force: true })]);
      const webhookCtx = part('webhooks');
      const webhookLog = webhookCtx.log;
      const webhooks = createWebhookDeliverer(
        {
          databaseUrl: db.webhooksUrl,
          schema,
          projectionSchema: schema,
          allowNetworks: '127.0.0.0/8,::1/128', // receivers on this machine (WEBHOOK_ALLOW_NETWORKS)
          secretKeys: webhookSecretKeys(webhookKey),
          logger: webhookLog,
          wakeUp: listenWakeUp(db.webhooksUrl, STREAM_CHANNEL, webhookLog),
        },
        webhookCtx,
      );
      await webhooks.start();
      stops.push(['webhooks', () => webhooks.stop()]);

      let live: NodeJS.Timeout | null = null;
      if (!values['no-live']) {
        // Keep the chains alive: a gentle ETH random walk on each (its own), so equity and ranges keep moving.
        const walks = chains.map((c) => ({ c, usd: 2950 }));
        live = setInterval(() => {
          for (const w of walks) {
            w.usd = Math.max(2000, Math.min(4000, w.usd * (1 + (Math.random() - 0.5) * 0.01)));
            movePrice(w.c.stack, w.c.stack.tokens.weth, Math.round(w.usd * 100) / 100).catch((err: unknown) =>
              log.warn({ err, chainId: w.c.chainId }, 'price move failed'),
            );
          }
        }, 10_000);
        stops.push(['price walk', async () => void (live && clearInterval(live))]);
      }

      const first = demo.vaults[0]!.address.toLowerCase();
      // Its address is a vault on every demo chain: the API names it by its CAIP-10 id (a bare
      // address on several chains answers 409 listing them).
      const firstId = vaultId(main.chainId, first);
      const owner = demo.vaults[0]!.owner.toLowerCase();
      const weth = stack.tokens.weth.address.toLowerCase();
      console.log(
        [
          '',
          `dashboard: ${url}/dashboard`,
          `reader:    ${url}/v1`,
          `docs:      ${url}/docs`,
          `snapshot:  ${url}/v1/vault/${firstId}/snapshot`,
          `events:    ${url}/v1/vault/${firstId}/events`,
          `vaults:    ${url}/v1/vaults`,
          ...chains.map(
            (c) =>
              `chain:     ${c.anvil.rpcUrl} (anvil, chain id ${c.chainId}; a block every 2 s; factory ${c.stack.factory}; ${c.demo.vaults.length} vaults)`,
          ),
          `deposit:   ${depositCommand(anvil.rpcUrl, owner, first, weth, 10n ** 18n)}`,
          `           (Vault.deposit(token, amount) from the vault's owner ${owner}, an unlocked anvil account`,
          `           whose WETH ${weth} and USDC ${stack.tokens.usdc.address.toLowerCase()} are approved to it: 1 WETH here;`,
          '           the open dashboard shows it within a block)',
          `operators: export ${operatorEnv({
            MIGRATE_DATABASE_URL: db.migratorUrl,
            DATABASE_URL: db.writerUrl,
            KAFKA_BROKERS: kafka.brokers.join(','),
            RPC_URL: anvil.rpcUrl,
            FACTORY_ADDRESS: stack.factory,
            ...(schema === 'vault_yield' ? {} : { PROJECTION_SCHEMA: schema }),
            ...(views === 'vault_yield_api' ? {} : { VIEWS_SCHEMA: views }),
          })}`,
          "           (the README's Operators commands against this stack: they fold, verify and publish what",
          '           the live projection reads and keep the roles that read and write it, so no topic and no role',
          '           is named)',
          `webhooks:  DATABASE_URL=${db.webhooksUrl} WEBHOOK_SECRET_KEY=$(cat ${keyFile}) WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8,::1/128 npx vault-yield webhooks add URL --all`,
          "           (this run's deliverer's role and key: endpoints added so are delivered to while it runs)",
          '',
          'Ctrl-C stops everything this command started.',
        ].join('\n'),
      );
      const halted = await new Promise<boolean>((resolve) => {
        process.once('SIGINT', () => resolve(false));
        process.once('SIGTERM', () => resolve(false));
        for (const [i, indexer] of indexers.entries())
          indexer.done.catch((err: unknown) => {
            log.error({ err, chainId: chains[i]!.chainId }, 'indexer halted: stopping everything');
            resolve(true);
          });
      });
      log.info('stopping');
      return await finish(halted ? 1 : 0);
    } catch (err) {
      log.error({ err }, 'dev failed');
      return await finish(1);
    }
  },
};
