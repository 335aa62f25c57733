/**
 * Freshness: how long after a block lands its vault activity shows in the API. The dev stack on
 * real parts — anvil (automine; WebSocket on its HTTP port), Kafka, Postgres — with the indexer
 * (following new heads over WebSocket, a 500 ms poll as its floor, as `vault-yield dev` runs it),
 * the projector and the reader in this process. Deposits are sent as a user sends them, one at a
 * time with a random pause; each is timed from its receipt (the block is mined) until
 * `GET /v1/tx/{hash}` serves its ledger row, polled every 2 ms. The indexer's share is timed too
 * (until its checkpoint covers the block: the record is acknowledged by Kafka by then), and so is
 * the push: until the deposit's ledger row arrives on an open stream (`GET /v1/vault/{a}/stream`
 * through the typed client's subscribe(), #28's block → event figure) — once beside the poller, and
 * once more for as many deposits with nobody polling (a dashboard does not poll: the poller's
 * requests take a share of the two cores the pipeline runs on).
 *
 * Env: KAFKA_BROKERS / DATABASE_URL (else the local runners, as the tests resolve them),
 * BENCH_DEPOSITS (default 100), BENCH_PAUSE_MS (upper bound of the random pause, default 300),
 * BENCH_WS=false (poll only: the figure without the subscription).
 * Last line: `freshness: <p50> ms`.
 *
 * `--second-chain-down` (#45: one chain's node stopped, the other chain's freshness unchanged): a
 * second anvil (chain 31338, the same deployer stack, the demo's vaults at the same addresses) with
 * its own indexer in this process, on the same schema and topic, reaching its node through a TCP
 * proxy (cuttableProxy). Chain 31338 stays busy the whole run (a deposit on one of its vaults every
 * 0–BENCH_PAUSE_MS). The passes above run with both nodes up; then the proxy is cut (the node
 * down, its chain going on) and the first chain is timed again for BENCH_DEPOSITS deposits beside
 * the poller; then the node is restored and the bench fails (exit 1) unless the second indexer's
 * checkpoint reaches its node's head (number and hash) and the API serves its last deposit.
 * Last line: `freshness: p50 <X> ms p99 <Y> ms (second chain down: p50 <X'> ms p99 <Y'> ms)`.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from '@vault-yield/client';
import { createLogger } from '@vault-yield/common';
import { testTokenAbi, vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  type CuttableProxy,
  cuttableProxy,
  deployReferenceStack,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
  write,
} from '@vault-yield/devstack/chain';
import { dropDatabase, ensureProjectDatabase, ROLES } from '@vault-yield/devstack/postgres';
import { vaultId } from '@vault-yield/domain';
import { createIndexer, type Indexer } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { createProjector } from '@vault-yield/projector';
import { createReader, readerConfig } from '@vault-yield/reader';
import { createPgPool, migrate } from '@vault-yield/store';
import { resolveKafka, resolvePostgres } from '@vault-yield/test-kit/services';

const DEPOSITS = Number(process.env.BENCH_DEPOSITS ?? 100);
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 300);
const WS = process.env.BENCH_WS !== 'false';
const SCHEMA = 'vault_yield';
const SECOND_CHAIN_DOWN = process.argv.includes('--second-chain-down');
const SECOND_CHAIN_ID = 31338;

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The second chain of `--second-chain-down`: its node behind a proxy, its indexer, its traffic. */
interface SecondChain {
  readonly anvil: AnvilInstance;
  readonly stack: ReferenceStack;
  readonly proxy: CuttableProxy;
  readonly indexer: Indexer;
  /** Starts the traffic: a deposit on one of its vaults after every random pause. */
  busy(): void;
  /** Stops the traffic; the last deposit's transaction hash. */
  quiet(): Promise<string | undefined>;
  stop(): Promise<void>;
}

interface Shared {
  brokers: string[];
  topic: string;
  databaseUrl: string;
}

/** Chain 31338 with the same deployer stack and the demo played on it; its indexer not started. */
async function secondChain(shared: Shared): Promise<SecondChain> {
  const anvil = await startAnvil({ chainId: SECOND_CHAIN_ID });
  const stop: (() => Promise<unknown>)[] = [() => anvil.stop()];
  const close = async () => {
    for (const s of stop.reverse()) await s().catch(() => {});
  };
  try {
    const stack = await deployReferenceStack(anvil.rpcUrl);
    const demo = await playDemoScenario(stack);
    const vaults = demo.vaults.slice(0, 2);
    const token = stack.tokens.usdc;
    const c = stack.clients;
    for (const v of vaults) {
      await write(c, stack.accounts.deployer, token.address, testTokenAbi, 'mint', [
        v.owner,
        10n ** BigInt(token.decimals + 9),
      ]);
      await write(c, v.owner, token.address, testTokenAbi, 'approve', [v.address, (1n << 256n) - 1n]);
    }
    const proxy = await cuttableProxy(anvil.rpcUrl);
    stop.push(() => proxy.close());
    const indexer = createIndexer({
      rpcUrl: proxy.url,
      ...(WS ? { rpcWsUrl: proxy.url.replace(/^http/, 'ws') } : {}),
      chainId: SECOND_CHAIN_ID,
      factory: stack.factory,
      startBlock: Number(stack.deploymentBlock),
      kafka: { brokers: shared.brokers, topic: shared.topic },
      databaseUrl: shared.databaseUrl,
      schema: SCHEMA,
      pollIntervalMs: 500,
      // Its node down, it retries and says so at warn on every attempt: errors only here.
      logger: createLogger({ name: 'freshness-bench-second-chain', level: process.env.LOG_LEVEL ?? 'error' }),
    });
    stop.push(() => indexer.stop());
    let running = false;
    let loop: Promise<void> = Promise.resolve();
    let last: string | undefined;
    return {
      anvil,
      stack,
      proxy,
      indexer,
      busy() {
        if (running) return;
        running = true;
        loop = (async () => {
          for (let i = 0; running; i++) {
            await sleep(Math.random() * PAUSE_MS);
            const v = vaults[i % vaults.length]!;
            const r = await write(c, v.owner, v.address, vaultAbi, 'deposit', [
              token.address,
              10n ** BigInt(token.decimals),
            ]);
            last = r.transactionHash;
          }
        })();
      },
      async quiet() {
        running = false;
        await loop;
        return last;
      },
      async stop() {
        running = false;
        await loop.catch(() => {});
        await close();
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Waits until the indexer's checkpoint is its node's head (number and hash); throws after `ms`. */
async function caughtUp(indexer: Indexer, stack: ReferenceStack, ms: number): Promise<number> {
  const end = Date.now() + ms;
  for (;;) {
    const head = await stack.clients.publicClient.getBlock();
    const c = indexer.status().checkpoint;
    if (c.blockNumber === Number(head.number) && c.blockHash === head.hash) return c.blockNumber;
    if (Date.now() > end)
      throw new Error(
        `chain ${SECOND_CHAIN_ID} did not catch up in ${ms} ms: checkpoint ${c.blockNumber} (${c.blockHash}), head ${head.number} (${head.hash})`,
      );
    await sleep(50);
  }
}

async function main() {
  const [kafka, postgres] = await Promise.all([resolveKafka(), resolvePostgres()]);
  console.log(`kafka: ${kafka.description}; postgres: ${postgres.description}`);
  const brokers = kafka.url.split(',');
  const topic = `bench-freshness-${Date.now().toString(36)}`;
  const database = `bench_fresh_${randomBytes(4).toString('hex')}`;
  const db = await ensureProjectDatabase(postgres.url, database);
  const migratePool = createPgPool({ url: db.writerUrl, applicationName: 'bench-migrate', max: 1 });
  await migrate(migratePool, SCHEMA, ROLES.reader);
  await migratePool.end();
  const admin = await createLogAdmin({ brokers, clientId: 'bench-freshness' });
  await admin.ensureTopic({ topic, partitions: 4 });

  const anvil = await startAnvil();
  const log = createLogger({ name: 'freshness-bench', level: process.env.LOG_LEVEL ?? 'warn' });
  let second: SecondChain | undefined;
  try {
    const stack = await deployReferenceStack(anvil.rpcUrl);
    const demo = await playDemoScenario(stack);
    const vault = demo.vaults[0]!;
    const token = stack.tokens.usdc;
    const c = stack.clients;
    await write(c, stack.accounts.deployer, token.address, testTokenAbi, 'mint', [
      vault.owner,
      10n ** BigInt(token.decimals + 9),
    ]);
    await write(c, vault.owner, token.address, testTokenAbi, 'approve', [vault.address, (1n << 256n) - 1n]);
    if (SECOND_CHAIN_DOWN) second = await secondChain({ brokers, topic, databaseUrl: db.writerUrl });

    const indexer = createIndexer({
      rpcUrl: anvil.rpcUrl,
      ...(WS ? { rpcWsUrl: anvil.rpcUrl.replace(/^http/, 'ws') } : {}),
      chainId: anvil.chainId,
      factory: stack.factory,
      startBlock: Number(stack.deploymentBlock),
      kafka: { brokers, topic },
      databaseUrl: db.writerUrl,
      schema: SCHEMA,
      pollIntervalMs: 500,
      logger: log,
    });
    const projector = createProjector({
      kafka: { brokers, topic, consumerGroup: `${topic}-projector` },
      databaseUrl: db.writerUrl,
      schema: SCHEMA,
      migrate: false,
      logger: log,
    });
    const reader = createReader(
      readerConfig(db.readerUrl, {
        schema: SCHEMA,
        port: 0,
        host: '127.0.0.1',
        rateLimit: { ratePerSecond: 0, burst: 1, trustedProxies: { kind: 'none' } },
        logger: log,
      }),
    );
    await indexer.start();
    await second?.indexer.start();
    await projector.start();
    const { url } = await reader.start();
    const streams = new AbortController();
    try {
      await indexer.waitFor(Number(await c.publicClient.getBlockNumber()));
      if (second) await caughtUp(second.indexer, second.stack, 120_000);
      await projector.caughtUp({ timeoutMs: 60_000, pollMs: 20 });
      second?.busy();

      // The push side: a dashboard's open stream on the vault; arrival times by transaction. The
      // vault is named by its id: with a second chain its bare address is a vault on both.
      const arrived = new Map<string, number>();
      const streamOpen = new Promise<void>((resolve) => {
        createClient(url).subscribe(
          vaultId(anvil.chainId, vault.address),
          {
            snapshot: () => resolve(),
            ledger: (row) => {
              if (!arrived.has(row.txHash)) arrived.set(row.txHash, performance.now());
            },
          },
          { signal: streams.signal },
        );
      });
      await streamOpen;
      /** One deposit after a random pause: its receipt, when it was seen, and the indexer's share. */
      const deposit = async () => {
        await sleep(Math.random() * PAUSE_MS);
        const receipt = await write(c, vault.owner, vault.address, vaultAbi, 'deposit', [
          token.address,
          10n ** BigInt(token.decimals),
        ]);
        const t0 = performance.now();
        const idx = indexer.waitFor(Number(receipt.blockNumber)).then(() => performance.now() - t0);
        return { receipt, t0, idx };
      };
      /** Milliseconds from `t0` until the deposit's ledger row arrived on the open stream. */
      const onStream = async (hash: string, t0: number, pollMs: number): Promise<number> => {
        for (;;) {
          const at = arrived.get(hash);
          if (at !== undefined) return at - t0;
          if (performance.now() - t0 > 30_000)
            throw new Error(`deposit ${hash} never arrived on the stream in 30 s`);
          await sleep(pollMs);
        }
      };
      /** Until `GET /v1/tx/{hash}` serves a ledger row; throws after 30 s from `t0`. */
      const served = async (hash: string, t0: number) => {
        for (;;) {
          const res = await fetch(`${url}/v1/tx/${hash}`);
          const body = (await res.json()) as unknown[] | { error: unknown };
          if (res.status === 200 && Array.isArray(body) && body.length > 0) return;
          if (performance.now() - t0 > 30_000) throw new Error(`deposit ${hash} not served in 30 s`);
          await sleep(2);
        }
      };
      /** `DEPOSITS` deposits beside the 2 ms poller: block → served, → checkpoint, → stream. */
      const polledPass = async () => {
        const total: number[] = [];
        const indexed: number[] = [];
        const pushed: number[] = [];
        for (let i = 0; i < DEPOSITS; i++) {
          const { receipt, t0, idx } = await deposit();
          await served(receipt.transactionHash, t0);
          total.push(performance.now() - t0);
          indexed.push(await idx);
          pushed.push(await onStream(receipt.transactionHash, t0, 2));
        }
        const up = (a: number[]) => [...a].sort((x, y) => x - y);
        return { total: up(total), indexed: up(indexed), pushed: up(pushed) };
      };
      const { total: sorted, indexed: idxSorted, pushed } = await polledPass();
      // The push alone, as a dashboard sees it: the same deposits with nobody polling GET /v1/tx
      // (the 2 ms poller above takes a share of the two cores the pipeline runs on). Each is timed
      // from its receipt until its ledger row arrives on the open stream.
      const streamOnly: number[] = [];
      const idxOnly: number[] = [];
      for (let i = 0; i < DEPOSITS; i++) {
        const { receipt, t0, idx } = await deposit();
        streamOnly.push(await onStream(receipt.transactionHash, t0, 1));
        idxOnly.push(await idx);
      }
      const fmt = (s: number[]) =>
        `p50 ${quantile(s, 0.5).toFixed(0)} ms, p95 ${quantile(s, 0.95).toFixed(0)} ms, p99 ${quantile(s, 0.99).toFixed(0)} ms, max ${s[s.length - 1]!.toFixed(0)} ms`;
      console.log(
        `deposits: ${DEPOSITS}, random pause up to ${PAUSE_MS} ms between them; new heads: ${indexer.status().heads} (BENCH_WS=${WS})`,
      );
      if (second)
        console.log(
          `second chain ${SECOND_CHAIN_ID} up and busy (a deposit every 0–${PAUSE_MS} ms), its indexer in this process on the same schema and topic`,
        );
      console.log(`block mined → indexer checkpoint (record acknowledged by Kafka): ${fmt(idxSorted)}`);
      console.log(`block mined → GET /v1/tx serves the ledger row: ${fmt(sorted)}`);
      console.log(`block mined → the ledger row arrives on an open stream: ${fmt(pushed)}`);
      console.log(
        `without the poller (${DEPOSITS} more deposits): block mined → indexer checkpoint ${fmt([...idxOnly].sort((a, b) => a - b))}; → the row on the open stream ${fmt([...streamOnly].sort((a, b) => a - b))}`,
      );
      if (!second) {
        console.log(`freshness: ${quantile(sorted, 0.5).toFixed(0)} ms`);
        return;
      }

      // The second chain's node goes down; its chain goes on (still busy) without its indexer.
      const checkpointAtCut = second.indexer.status().checkpoint.blockNumber;
      second.proxy.cut();
      await sleep(1_000); // its indexer has met the dead link (and published what it had fetched)
      const stuck = second.indexer.status().checkpoint.blockNumber;
      const down = await polledPass();
      if (second.indexer.status().checkpoint.blockNumber !== stuck)
        throw new Error(
          `chain ${SECOND_CHAIN_ID}'s indexer moved while its node was cut: the proxy did not cut it`,
        );
      const headDown = Number(await second.stack.clients.publicClient.getBlockNumber());
      console.log(
        `second chain ${SECOND_CHAIN_ID} down (its checkpoint ${stuck}, at the cut ${checkpointAtCut}; its head ${headDown}), ${DEPOSITS} deposits:`,
      );
      console.log(`  block mined → indexer checkpoint: ${fmt(down.indexed)}`);
      console.log(`  block mined → GET /v1/tx serves the ledger row: ${fmt(down.total)}`);
      console.log(`  block mined → the ledger row arrives on an open stream: ${fmt(down.pushed)}`);
      if (headDown <= stuck)
        throw new Error(
          `chain ${SECOND_CHAIN_ID} did not move while its node was down: the outage proved nothing`,
        );

      // The node back: the second chain catches up, and its last deposit is served.
      const restoredAt = performance.now();
      second.proxy.restore();
      const lastTx = await second.quiet();
      const reached = await caughtUp(second.indexer, second.stack, 120_000);
      const caughtUpMs = performance.now() - restoredAt;
      await projector.caughtUp({ timeoutMs: 60_000, pollMs: 20 });
      if (lastTx === undefined) throw new Error(`chain ${SECOND_CHAIN_ID} sent no deposit`);
      const rows = (await (await fetch(`${url}/v1/tx/${lastTx}`)).json()) as { chainId?: number }[];
      if (!Array.isArray(rows) || rows.length === 0 || rows.some((r) => r.chainId !== SECOND_CHAIN_ID))
        throw new Error(
          `chain ${SECOND_CHAIN_ID}'s last deposit ${lastTx} not served after it caught up: ${JSON.stringify(rows)}`,
        );
      console.log(
        `second chain ${SECOND_CHAIN_ID} restored: its checkpoint reached its head (block ${reached}, ${reached - stuck} blocks indexed since the restore) in ${caughtUpMs.toFixed(0)} ms; its last deposit served`,
      );
      const fig = (s: number[]) =>
        `p50 ${quantile(s, 0.5).toFixed(0)} ms p99 ${quantile(s, 0.99).toFixed(0)} ms`;
      console.log(`freshness: ${fig(sorted)} (second chain down: ${fig(down.total)})`);
    } finally {
      streams.abort();
      await reader.stop();
      await projector.stop();
      await indexer.stop();
      await second?.indexer.stop();
    }
  } finally {
    await second?.stop();
    await anvil.stop();
    await admin.deleteTopic(topic).catch(() => {});
    await admin.close();
    await dropDatabase(postgres.url, database).catch(() => {});
  }
}

await main();
