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
 */
import { randomBytes } from 'node:crypto';
import { createClient } from '@vault-yield/client';
import { createLogger } from '@vault-yield/common';
import { testTokenAbi, vaultAbi } from '@vault-yield/contracts';
import { deployReferenceStack, playDemoScenario, startAnvil, write } from '@vault-yield/devstack/chain';
import { dropDatabase, ensureProjectDatabase, ROLES } from '@vault-yield/devstack/postgres';
import { createIndexer } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { createProjector } from '@vault-yield/projector';
import { createReader, readerConfig } from '@vault-yield/reader';
import { createPgPool, migrate } from '@vault-yield/store';
import { resolveKafka, resolvePostgres } from '@vault-yield/test-kit/services';

const DEPOSITS = Number(process.env.BENCH_DEPOSITS ?? 100);
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 300);
const WS = process.env.BENCH_WS !== 'false';
const SCHEMA = 'vault_yield';

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    await projector.start();
    const { url } = await reader.start();
    const streams = new AbortController();
    try {
      await indexer.waitFor(Number(await c.publicClient.getBlockNumber()));
      await projector.caughtUp({ timeoutMs: 60_000, pollMs: 20 });

      // The push side: a dashboard's open stream on the vault; arrival times by transaction.
      const arrived = new Map<string, number>();
      const streamOpen = new Promise<void>((resolve) => {
        createClient(url).subscribe(
          vault.address,
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
      const total: number[] = [];
      const indexed: number[] = [];
      const pushed: number[] = [];
      for (let i = 0; i < DEPOSITS; i++) {
        const { receipt, t0, idx } = await deposit();
        for (;;) {
          const res = await fetch(`${url}/v1/tx/${receipt.transactionHash}`);
          const body = (await res.json()) as unknown[] | { error: unknown };
          if (res.status === 200 && Array.isArray(body) && body.length > 0) break;
          if (performance.now() - t0 > 30_000)
            throw new Error(`deposit ${receipt.transactionHash} not served in 30 s`);
          await sleep(2);
        }
        total.push(performance.now() - t0);
        indexed.push(await idx);
        pushed.push(await onStream(receipt.transactionHash, t0, 2));
      }
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
      const sorted = [...total].sort((a, b) => a - b);
      const idxSorted = [...indexed].sort((a, b) => a - b);
      const fmt = (s: number[]) =>
        `p50 ${quantile(s, 0.5).toFixed(0)} ms, p95 ${quantile(s, 0.95).toFixed(0)} ms, p99 ${quantile(s, 0.99).toFixed(0)} ms, max ${s[s.length - 1]!.toFixed(0)} ms`;
      console.log(
        `deposits: ${DEPOSITS}, random pause up to ${PAUSE_MS} ms between them; new heads: ${indexer.status().heads} (BENCH_WS=${WS})`,
      );
      console.log(`block mined → indexer checkpoint (record acknowledged by Kafka): ${fmt(idxSorted)}`);
      console.log(`block mined → GET /v1/tx serves the ledger row: ${fmt(sorted)}`);
      console.log(
        `block mined → the ledger row arrives on an open stream: ${fmt([...pushed].sort((a, b) => a - b))}`,
      );
      console.log(
        `without the poller (${DEPOSITS} more deposits): block mined → indexer checkpoint ${fmt([...idxOnly].sort((a, b) => a - b))}; → the row on the open stream ${fmt([...streamOnly].sort((a, b) => a - b))}`,
      );
      console.log(`freshness: ${quantile(sorted, 0.5).toFixed(0)} ms`);
    } finally {
      streams.abort();
      await reader.stop();
      await projector.stop();
      await indexer.stop();
    }
  } finally {
    await anvil.stop();
    await admin.deleteTopic(topic).catch(() => {});
    await admin.close();
    await dropDatabase(postgres.url, database).catch(() => {});
  }
}

await main();
