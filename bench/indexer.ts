/**
 * Indexer throughput: a local anvil chain holding ≥ 100,000 vault events (the scenario driver's
 * bulk mode), then one indexer (in-process, createIndexer) backfilling it into a fresh topic and
 * database. Prints records/s (records acknowledged by Kafka ÷ wall time from start to the last
 * checkpoint), RPC calls made and peak RSS sampled during the backfill; the last line is
 * `indexer: <records/s> records/s`.
 *
 * Env: KAFKA_BROKERS / DATABASE_URL (else the local runners, as the tests resolve them),
 * BENCH_VAULTS (default 1,000), BENCH_EVENTS_PER_VAULT (default 150: about two thirds of the bulk driver's planned events land on chain), BENCH_CONCURRENCY (4),
 * BENCH_KEEP=true keeps the topic and database, BENCH_CHAIN_CACHE=<dir> keeps the generated chain
 * (anvil state dump) there and reuses it on the next run.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { eventTopics } from '@vault-yield/chain';
import { createLogger } from '@vault-yield/common';
import { createLogAdmin } from '@vault-yield/log';
import { createPgPool, migrate } from '@vault-yield/store';
import { createRpc, deployReferenceStack, playBulk, startAnvil } from '../infra/chain/index.js';
import { dropDatabase, ensureProjectDatabase, ensureRoles, ROLES } from '../infra/postgres/index.js';
import { createIndexer } from '../services/indexer/src/index.js';
import { resolveKafka, resolvePostgres } from '../test/harness/resolve.js';

const VAULTS = Number(process.env.BENCH_VAULTS ?? 1_000);
const EVENTS_PER_VAULT = Number(process.env.BENCH_EVENTS_PER_VAULT ?? 150);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const KEEP = process.env.BENCH_KEEP === 'true';
const SCHEMA = 'vault_yield';
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

async function main() {
  const [kafka, postgres] = await Promise.all([resolveKafka(), resolvePostgres()]);
  console.log(`kafka: ${kafka.description}; postgres: ${postgres.description}`);
  const brokers = kafka.url.split(',');
  const topic = `bench-indexer-${Date.now().toString(36)}`;
  const database = `bench_indexer_${randomBytes(4).toString('hex')}`;
  await ensureRoles(postgres.url);
  const db = await ensureProjectDatabase(postgres.url, database);
  const migratePool = createPgPool({ url: db.writerUrl, applicationName: 'bench-migrate', max: 1 });
  await migrate(migratePool, SCHEMA, ROLES.reader);
  await migratePool.end();

  const cache = process.env.BENCH_CHAIN_CACHE;
  const cacheKey = cache ? `${cache}/chain-${VAULTS}x${EVENTS_PER_VAULT}` : undefined;
  const cached = cacheKey && existsSync(`${cacheKey}.json`) && existsSync(`${cacheKey}.state`);
  const anvilArgs = ['--gas-limit', '4000000000', '--preserve-historical-states'];
  if (cacheKey) anvilArgs.push(cached ? '--load-state' : '--dump-state', `${cacheKey}.state`);
  if (cached) anvilArgs.push('--dump-state', `${cacheKey}.state.tmp`);
  const anvil = await startAnvil({ args: anvilArgs, timeoutMs: 180_000 });
  try {
    let chain: { factory: `0x${string}`; fromBlock: number; toBlock: number; planned: number; txs: number };
    if (cached) {
      chain = JSON.parse(readFileSync(`${cacheKey}.json`, 'utf8'));
      console.log(`chain: loaded from ${cacheKey}.state`);
    } else {
      const stack = await deployReferenceStack(anvil.rpcUrl);
      const g0 = performance.now();
      const bulk = await playBulk(stack, { vaults: VAULTS, eventsPerVault: EVENTS_PER_VAULT, verify: false });
      chain = {
        factory: stack.factory,
        fromBlock: Number(stack.deploymentBlock),
        toBlock: Number(bulk.toBlock),
        planned: bulk.plannedEvents,
        txs: bulk.txs,
      };
      console.log(`chain: generated in ${((performance.now() - g0) / 1000).toFixed(1)} s`);
      if (cacheKey) writeFileSync(`${cacheKey}.json`, JSON.stringify(chain));
    }
    const onChain = await countVaultEvents(anvil.rpcUrl, chain.factory, chain.fromBlock, chain.toBlock);
    console.log(
      `chain: ${onChain} vault events on chain (${chain.planned} planned, ${chain.txs} txs) in blocks ` +
        `${chain.fromBlock}..${chain.toBlock}`,
    );

    const indexer = createIndexer({
      rpcUrl: anvil.rpcUrl,
      chainId: anvil.chainId,
      factory: chain.factory,
      kafka: { brokers, topic, partitions: 4 },
      databaseUrl: db.writerUrl,
      schema: SCHEMA,
      pollIntervalMs: 50,
      concurrency: CONCURRENCY,
      logger: createLogger({ name: 'indexer-bench', level: process.env.LOG_LEVEL ?? 'warn' }),
    });
    let peak = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    const t0 = performance.now();
    await indexer.start();
    await indexer.waitFor(chain.toBlock);
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const s = indexer.status();
    await indexer.stop();

    const admin = await createLogAdmin({ brokers, clientId: 'bench-admin' });
    let onTopic = 0;
    for (const o of await admin.offsets(topic)) onTopic += Number(BigInt(o.high) - BigInt(o.low));
    if (!KEEP) await admin.deleteTopic(topic).catch(() => {});
    await admin.close();

    const rate = s.recordsPublished / seconds;
    console.log(
      `records published: ${s.recordsPublished} (on the topic: ${onTopic}) in ${seconds.toFixed(2)} s`,
    );
    console.log(`vaults: ${s.vaults}; RPC calls: ${s.rpcCalls} in ${s.rpcHttpRequests} HTTP requests`);
    console.log(`peak RSS (bench process, sampled during the backfill): ${mib(peak)} MiB`);
    console.log(`indexer: ${Math.round(rate)} records/s`);
  } finally {
    await anvil.stop();
    if (!KEEP) await dropDatabase(postgres.url, database).catch(() => {});
    await Promise.all([kafka.stop(), postgres.stop()]);
  }
}

/** Vault records on chain, counted with plain eth_getLogs per block (VaultCreated + logs of created vaults). */
async function countVaultEvents(rpcUrl: string, factory: string, from: number, to: number): Promise<number> {
  const rpc = createRpc(rpcUrl);
  const created = eventTopics.vaultCreated;
  const vaults = new Set<string>();
  let n = 0;
  for (let b = from; b <= to; b++) {
    const logs = await rpc.call<{ address: string; topics: string[] }[]>('eth_getLogs', [
      { fromBlock: `0x${b.toString(16)}`, toBlock: `0x${b.toString(16)}` },
    ]);
    for (const l of logs) {
      const a = l.address.toLowerCase();
      if (a === factory.toLowerCase() && l.topics[0] === created) {
        vaults.add(`0x${l.topics[1]!.slice(26)}`);
        n++;
      } else if (vaults.has(a) && (eventTopics.vault as readonly string[]).includes(l.topics[0]!)) n++;
    }
  }
  return n;
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
