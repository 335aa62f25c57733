/**
 * Indexer throughput: a local anvil chain holding ≥ 100,000 vault events (the scenario driver's
 * bulk mode), then one indexer (in-process, createIndexer) backfilling it into a fresh topic and
 * database. Prints records/s (records acknowledged by Kafka ÷ wall time from start to the last
 * checkpoint), RPC calls made and peak RSS sampled during the backfill; the last line is
 * `indexer: <records/s> records/s`.
 *
 * Env: KAFKA_BROKERS / DATABASE_URL (else the local runners, as the tests resolve them),
 * BENCH_VAULTS (default 1,000), BENCH_EVENTS_PER_VAULT (default 300: every planned event lands,
 * 300,000 in all; generating that chain takes ≈ 3 minutes and its cached state ≈ 7.5 GB; 500 × 100
 * takes 33 s and 0.9 GB), BENCH_CONCURRENCY (4),
 * BENCH_RECORD_ENCODING=json writes the earlier encoding (default binary), BENCH_KEEP=true keeps the topic and database, BENCH_CHAIN_CACHE=<dir> keeps the generated chain
 * (anvil state dump) there and reuses it on the next run, BENCH_CPU_PROFILE=<file.cpuprofile>
 * writes a V8 CPU profile of the backfill (the indexer runs in this process),
 * BENCH_HEAP_PROFILE=<file.heapprofile> a sampling heap profile of the backfill that counts every
 * allocation, collected ones included (where the garbage comes from).
 * BENCH_NODE_REPLAY=<file>: the indexer alone, as with the node on another machine — a run without
 * that file records the node's answers into it through bench/rpc-replay.ts (its figures then
 * include the recorder's CPU), the next run on the same chain replays them (the node answers only
 * what the file lacks: "forwarded" in the output); the replayer's CPU is printed apart.
 * BENCH_NODE_LATENCY_MS (default 0) delays each of the replayer's answers, as a remote node would.
 * Last, against the floor measured in the same run (bench/floor.ts, measureIndexerFloor: the same
 * records produced again by the publisher, and — with a replayed node — the node's recorded answers
 * parsed): `indexer-cpu: R × floor (A µs a record, …)`, A the indexer process's CPU per record,
 * every thread; the node's CPU is printed apart (#30: R ≤ 1.5).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { loadavg } from 'node:os';
import { eventTopics } from '@vault-yield/chain';
import { createLogger } from '@vault-yield/common';
import { createRpc, deployReferenceStack, playBulk, startAnvil } from '@vault-yield/devstack/chain';
import { dropDatabase, ensureProjectDatabase, ensureRoles, ROLES } from '@vault-yield/devstack/postgres';
import { createIndexer } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { createPgPool, migrate } from '@vault-yield/store';
import { resolveKafka, resolvePostgres } from '@vault-yield/test-kit/services';
import { benchChainKey } from './chain-cache.js';
import { measureIndexerFloor } from './floor.js';
import { ENCODING } from './log-fixture.js';
import { cpuSeconds, machineCpu, machineLine } from './proc.js';

const VAULTS = Number(process.env.BENCH_VAULTS ?? 1_000);
const EVENTS_PER_VAULT = Number(process.env.BENCH_EVENTS_PER_VAULT ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const KEEP = process.env.BENCH_KEEP === 'true';
const PROFILE = process.env.BENCH_CPU_PROFILE;
const HEAP_PROFILE = process.env.BENCH_HEAP_PROFILE;
const NODE_REPLAY = process.env.BENCH_NODE_REPLAY;
const NODE_LATENCY_MS = Number(process.env.BENCH_NODE_LATENCY_MS ?? 0);
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
  const cacheKey = cache ? benchChainKey(cache, VAULTS, EVENTS_PER_VAULT) : undefined;
  const cached = cacheKey !== undefined && isChainCached(cacheKey);
  const anvilArgs = ['--gas-limit', '4000000000', '--preserve-historical-states'];
  // A fresh chain is dumped by anvil when it exits (SIGTERM), which takes a while for this size:
  // stop() waits for it. The .json (the cache's "complete" mark) is written only after that.
  if (cacheKey) anvilArgs.push(cached ? '--load-state' : '--dump-state', `${cacheKey}.state`);
  const anvil = await startAnvil({
    args: anvilArgs,
    timeoutMs: 180_000,
    stopGraceMs: cacheKey && !cached ? 600_000 : 3000,
  });
  let generated: string | undefined;
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
      if (cacheKey) generated = JSON.stringify(chain);
    }
    const onChain = await countVaultEvents(anvil.rpcUrl, chain.factory, chain.fromBlock, chain.toBlock);
    console.log(
      `chain: ${onChain} vault events on chain (${chain.planned} planned, ${chain.txs} txs) in blocks ` +
        `${chain.fromBlock}..${chain.toBlock}`,
    );

    const proxy = NODE_REPLAY ? await startReplay(NODE_REPLAY, anvil.rpcUrl) : undefined;
    const indexer = createIndexer({
      rpcUrl: proxy?.url ?? anvil.rpcUrl,
      chainId: anvil.chainId,
      factory: chain.factory,
      kafka: { brokers, topic, partitions: 4, encoding: ENCODING },
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
    const profiler = PROFILE ? await startProfile('cpu') : undefined;
    const heapProfiler = HEAP_PROFILE ? await startProfile('heap') : undefined;
    const anvilCpu0 = cpuSeconds(anvil.pid);
    const proxyCpu0 = proxy ? cpuSeconds(proxy.pid) : 0;
    const kafkaPid = Number(/pid (\d+)/.exec(kafka.description)?.[1] ?? Number.NaN);
    const kafkaCpu0 = cpuSeconds(kafkaPid);
    const cpu0 = process.cpuUsage();
    const threads0 = threadCpu();
    const machine0 = machineCpu();
    const t0 = performance.now();
    await indexer.start();
    await indexer.waitFor(chain.toBlock);
    const seconds = (performance.now() - t0) / 1000;
    const machine = machineCpu();
    const cpu = process.cpuUsage(cpu0);
    const threads = threadCpu(threads0);
    const anvilCpu = cpuSeconds(anvil.pid) - anvilCpu0;
    const proxyCpu = proxy ? cpuSeconds(proxy.pid) - proxyCpu0 : 0;
    const kafkaCpu = cpuSeconds(kafkaPid) - kafkaCpu0;
    clearInterval(sampler);
    if (profiler) await profiler.stop(PROFILE!);
    if (heapProfiler) await heapProfiler.stop(HEAP_PROFILE!);
    const s = indexer.status();
    await indexer.stop();
    if (proxy) console.log(`node ${proxy.mode} (${NODE_REPLAY}): ${await proxy.stop()}`);

    // The floor, before the topic goes: its records produced again, the node's answers parsed.
    const floor = await measureIndexerFloor({
      brokers,
      topic,
      ...(proxy?.mode === 'replay' && NODE_REPLAY ? { answers: NODE_REPLAY } : {}),
    });
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
    console.log(
      `valuation: ${s.valuedBlocks} blocks with records, ${s.valuationCalls} lens eth_calls ` +
        `(${(s.valuationCalls / Math.max(1, s.valuedBlocks)).toFixed(2)} per block); ` +
        `RPC calls per block with records: ${(s.rpcCalls / Math.max(1, s.valuedBlocks)).toFixed(2)}`,
    );
    console.log(
      `average record size: ${(s.bytesPublished / Math.max(1, s.recordsPublished)).toFixed(0)} bytes ` +
        `(${s.bytesPublished} bytes of record values for ${s.recordsPublished} records)`,
    );
    console.log(`peak RSS (bench process, sampled during the backfill): ${mib(peak)} MiB`);
    const sec = (n: number) => (Number.isNaN(n) ? 'n/a' : `${n.toFixed(2)} s`);
    const load = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    console.log(
      `CPU during the backfill: indexer process ${sec((cpu.user + cpu.system) / 1e6)}, anvil ${sec(anvilCpu)}, ` +
        `local Kafka broker ${sec(kafkaCpu)}${proxy ? `, ${proxy.mode === 'replay' ? 'replayer' : 'recorder'} ${sec(proxyCpu)}` : ''} ` +
        `(wall ${seconds.toFixed(2)} s; load average ${load})`,
    );
    // Threads are unnamed ("node"): the main thread is the pid; the publisher thread is usually
    // the busiest other one, then V8's GC / compiler helpers.
    const others = [...threads.entries()].filter(([tid]) => tid !== process.pid).map(([, t]) => t);
    others.sort((a, b) => b - a);
    const rest = others.slice(3).reduce((a, t) => a + t, 0);
    console.log(
      `CPU by thread: main ${sec(threads.get(process.pid) ?? Number.NaN)}; busiest others ` +
        `${others.slice(0, 3).map(sec).join(', ')}; the rest ${sec(rest)}`,
    );
    console.log(machineLine(machine0, machine, s.recordsPublished));
    console.log(`indexer: ${Math.round(rate)} records/s`);
    const us = (seconds: number) => (seconds * 1e6) / Math.max(1, s.recordsPublished);
    const own = us((cpu.user + cpu.system) / 1e6);
    const parse = Number.isNaN(floor.parseUs)
      ? 'parse n/a: no replayed node'
      : `parse ${floor.parseUs.toFixed(1)}`;
    console.log(
      `indexer-cpu: ${(own / floor.us).toFixed(2)} × floor (${own.toFixed(1)} µs a record, every thread; ` +
        `floor ${floor.us.toFixed(1)} µs: produce ${floor.produceUs.toFixed(1)}, ${parse}; ` +
        `node ${us(proxy ? proxyCpu : anvilCpu).toFixed(1)} µs a record apart)`,
    );
  } finally {
    await anvil.stop();
    if (cacheKey && generated !== undefined && isChainCached(cacheKey, false)) {
      writeFileSync(`${cacheKey}.json`, generated);
      console.log(`chain: cached in ${cacheKey}.state`);
    }
    if (!KEEP) await dropDatabase(postgres.url, database).catch(() => {});
    await Promise.all([kafka.stop(), postgres.stop()]);
  }
}

/**
 * bench/rpc-replay.ts in a child process between the indexer and the node: replaying `file` when
 * it exists, else recording into it. `stop` ends it (a recorder writes its file then) and returns
 * its last line (answers kept, replayed, forwarded).
 */
async function startReplay(
  file: string,
  nodeUrl: string,
): Promise<{ url: string; pid: number; mode: 'record' | 'replay'; stop(): Promise<string> }> {
  const mode = existsSync(file) && statSync(file).size > 0 ? 'replay' : 'record';
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [
      '--max-old-space-size=8192',
      '--import',
      'tsx',
      'bench/rpc-replay.ts',
      mode,
      file,
      nodeUrl,
      String(NODE_LATENCY_MS),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  // Never left behind: a bench that fails half-way still ends its child.
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`rpc-replay exited (${code}) before it listened`)));
  });
  console.log(
    `node ${mode === 'replay' ? 'replayed from' : 'recorded into'} ${file} (${url}; ready in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
  return {
    url,
    pid: child.pid!,
    mode,
    stop: () =>
      new Promise((resolve) => {
        child.on('exit', () => resolve(out.trim().split('\n').at(-1) ?? ''));
        process.off('exit', kill);
        child.kill('SIGTERM');
      }),
  };
}

/** CPU seconds of each thread of this process (by tid), minus `since` when given. */
function threadCpu(since?: Map<number, number>): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const s = cpuSeconds(Number(tid), `/proc/self/task/${tid}/stat`);
      if (!Number.isNaN(s)) out.set(Number(tid), s - (since?.get(Number(tid)) ?? 0));
    }
  } catch {
    // no /proc
  }
  return out;
}

/**
 * A V8 profile of the backfill only, not the setup: the CPU profiler (BENCH_CPU_PROFILE) or the
 * sampling heap profiler counting collected objects too (BENCH_HEAP_PROFILE: where the garbage
 * comes from).
 */
async function startProfile(kind: 'cpu' | 'heap'): Promise<{ stop(path: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params?: object) =>
    new Promise<T>((res, rej) => session.post(method, params, (err, r) => (err ? rej(err) : res(r as T))));
  if (kind === 'cpu') {
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 500 });
    await post('Profiler.start');
  } else {
    await post('HeapProfiler.enable');
    await post('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }
  return {
    async stop(path) {
      const stop = kind === 'cpu' ? 'Profiler.stop' : 'HeapProfiler.stopSampling';
      const { profile } = await post<{ profile: object }>(stop);
      writeFileSync(path, JSON.stringify(profile));
      session.disconnect();
      console.log(`${kind === 'cpu' ? 'CPU' : 'heap'} profile of the backfill: ${path}`);
    },
  };
}

/** A complete cached chain: its description and a non-empty state dump. */
function isChainCached(cacheKey: string, withDescription = true): boolean {
  const state = `${cacheKey}.state`;
  return (
    (!withDescription || existsSync(`${cacheKey}.json`)) && existsSync(state) && statSync(state).size > 0
  );
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
