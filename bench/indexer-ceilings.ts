/**
 * Ceilings behind `bench:indexer`:
 * 1. how fast anvil itself serves eth_getLogs on the bench chain, with 1, 2, 4 and 8 range
 *    requests in flight, measured two ways — raw fetch (JSON parse only) and through
 *    packages/chain's getLogsOnce (viem transport + log normalisation) — with the CPU seconds
 *    anvil and this process spent;
 * 2. how fast packages/log's publisher alone (idempotent producer, acks -1, keyed by vault) takes
 *    records shaped like the indexer's (one vault event + a 3-token, 1-pool valuation context,
 *    ≈ 1 KB of JSON, or its binary encoding: BENCH_RECORD_ENCODING) into a fresh 4-partition topic,
 *    with the encoding's share measured apart.
 * Needs the cached bench chain (run `bench:indexer` once with BENCH_CHAIN_CACHE first) and Kafka
 * (resolved as the tests do). Last line: `indexer-ceilings: <best getLogs logs/s> logs/s`.
 *
 * Env: BENCH_CHAIN_CACHE (required), BENCH_VAULTS / BENCH_EVENTS_PER_VAULT (as bench:indexer),
 * CEILING_RANGE (blocks per request, default 5 ≈ 5,000 logs), CEILING_ROUNDS (default 3),
 * CEILING_RECORDS (publisher probe, default 100,000).
 */
import { readFileSync } from 'node:fs';
import { createCountingChainClient, eventTopics, getLogsOnce, type LogFilter } from '@vault-yield/chain';
import { startAnvil } from '@vault-yield/devstack/chain';
import { encodeRecordAs, SCHEMA_VERSION, type VaultRecord } from '@vault-yield/domain';
import { createLogAdmin, createPublisher } from '@vault-yield/log';
import { resolveKafka } from '@vault-yield/test-kit/services';
import { benchChainKey } from './chain-cache.js';
import { ENCODING } from './log-fixture.js';
import { cpuSeconds } from './proc.js';

const VAULTS = Number(process.env.BENCH_VAULTS ?? 1_000);
/** Best getLogs rate through packages/chain over every round and concurrency. */
let bestViem = 0;
const EVENTS_PER_VAULT = Number(process.env.BENCH_EVENTS_PER_VAULT ?? 300);
const RANGE = Number(process.env.CEILING_RANGE ?? 5);
const ROUNDS = Number(process.env.CEILING_ROUNDS ?? 3);
const RECORDS = Number(process.env.CEILING_RECORDS ?? 100_000);

async function main() {
  const cache = process.env.BENCH_CHAIN_CACHE;
  if (!cache) throw new Error('set BENCH_CHAIN_CACHE to the directory bench:indexer cached its chain in');
  const key = benchChainKey(cache, VAULTS, EVENTS_PER_VAULT);
  const chain = JSON.parse(readFileSync(`${key}.json`, 'utf8')) as { fromBlock: number; toBlock: number };
  const l0 = performance.now();
  const anvil = await startAnvil({
    args: ['--gas-limit', '4000000000', '--preserve-historical-states', '--load-state', `${key}.state`],
    timeoutMs: 600_000,
  });
  console.log(`anvil: state loaded in ${((performance.now() - l0) / 1000).toFixed(1)} s`);
  try {
    const { logsClient } = createCountingChainClient({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId });
    // The indexer's filter at this size: vault events by topic (more than 1,000 vaults).
    const filter: LogFilter = { topic0: eventTopics.vault };
    const ranges: [number, number][] = [];
    for (let f = chain.fromBlock; f <= chain.toBlock; f += RANGE)
      ranges.push([f, Math.min(chain.toBlock, f + RANGE - 1)]);

    let id = 1;
    const raw = async (from: number, to: number): Promise<number> => {
      const res = await fetch(anvil.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: id++,
          method: 'eth_getLogs',
          params: [
            {
              fromBlock: `0x${from.toString(16)}`,
              toBlock: `0x${to.toString(16)}`,
              topics: [[...filter.topic0]],
            },
          ],
        }),
      });
      const body = (await res.json()) as { result: unknown[] };
      return body.result.length;
    };
    const viem = async (from: number, to: number) => (await getLogsOnce(logsClient, filter, from, to)).length;

    const run = async (fetchRange: (f: number, t: number) => Promise<number>, concurrency: number) => {
      let next = 0;
      let logs = 0;
      const a0 = cpuSeconds(anvil.pid);
      const n0 = process.cpuUsage();
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < ranges.length) {
            const [f, t] = ranges[next++]!;
            const n = await fetchRange(f, t);
            logs += n;
          }
        }),
      );
      const s = (performance.now() - t0) / 1000;
      const n = process.cpuUsage(n0);
      return { logs, s, anvilCpu: cpuSeconds(anvil.pid) - a0, nodeCpu: (n.user + n.system) / 1e6 };
    };

    await run(raw, 2); // warm-up
    await run(viem, 2);
    console.log(`ranges: ${ranges.length} × ${RANGE} blocks, blocks ${chain.fromBlock}..${chain.toBlock}`);
    console.log('path  conc  logs     s      logs/s   anvil CPU s  node CPU s');
    // Interleaved (round, concurrency, path) so drift in the machine's load spreads over all rows.
    for (let r = 0; r < ROUNDS; r++) {
      for (const c of [1, 2, 4, 8]) {
        for (const [name, fn] of [
          ['raw', raw],
          ['viem', viem],
        ] as const) {
          const m = await run(fn, c);
          if (name === 'viem') bestViem = Math.max(bestViem, m.logs / m.s);
          console.log(
            `${name.padEnd(5)} ${String(c).padStart(4)}  ${String(m.logs).padEnd(8)} ${m.s.toFixed(2).padStart(5)}  ` +
              `${String(Math.round(m.logs / m.s)).padStart(7)}   ${m.anvilCpu.toFixed(2).padStart(10)}  ${m.nodeCpu.toFixed(2).padStart(10)}`,
          );
        }
      }
    }
  } finally {
    await anvil.stop();
  }
  await publisherCeiling();
  // The figure the indexer can never beat on this chain: anvil's getLogs through packages/chain.
  console.log(`indexer-ceilings: ${Math.round(bestViem)} logs/s`);
}

/** packages/log's publisher alone, on records shaped like the indexer's. */
async function publisherCeiling() {
  const kafka = await resolveKafka();
  const brokers = kafka.url.split(',');
  const topic = `bench-ceiling-${Date.now().toString(36)}`;
  const admin = await createLogAdmin({ brokers, clientId: 'ceiling-admin' });
  await admin.ensureTopic({ topic, partitions: 4 });
  const hex = (n: number, len: number) => `0x${n.toString(16).padStart(len, '0')}`;
  const token = (i: number, symbol: string, decimals: number, priceUsd: string) => ({
    address: hex(0xa0 + i, 40) as `0x${string}`,
    symbol,
    decimals,
    priceUsd,
    feed: hex(0xf0 + i, 40) as `0x${string}`,
    priceUpdatedAt: 1_790_000_000,
    heartbeat: 3600,
  });
  const context = {
    tokens: [token(1, 'WETH', 18, '3000'), token(2, 'USDC', 6, '1'), token(3, 'RWD', 18, '0.5')],
    pools: [
      {
        address: hex(0xb0, 40) as `0x${string}`,
        venue: 'uniswap-v3',
        feeTier: 500,
        sqrtPriceX96: '4339505179874779489431521',
        tick: -196256,
        token0: hex(0xa1, 40) as `0x${string}`,
        token1: hex(0xa2, 40) as `0x${string}`,
      },
    ],
    holdings: {
      balances: [
        { token: hex(0xa1, 40) as `0x${string}`, amount: '1000000000000000000' },
        { token: hex(0xa2, 40) as `0x${string}`, amount: '2500000000' },
      ],
      positions: [
        {
          id: '1',
          pool: hex(0xb0, 40) as `0x${string}`,
          tickLower: -196860,
          tickUpper: -195650,
          liquidity: '916121146487060003',
          owed0: '1234567890123',
          owed1: '4567',
        },
      ],
      pendingRewards: [],
    },
  };
  const records: VaultRecord[] = [];
  for (let i = 0; i < RECORDS; i++) {
    records.push({
      blockNumber: 50 + Math.floor(i / 1365),
      blockHash: hex(0xb10c + Math.floor(i / 1365), 64) as `0x${string}`,
      txHash: hex(0x7000000 + i, 64) as `0x${string}`,
      txIndex: i % 1600,
      logIndex: i % 5000,
      vault: hex(0x1000 + (i % 1000), 40) as `0x${string}`,
      type: 'position.rebalanced',
      payload: {
        positionId: '1',
        tickLower: -196860,
        tickUpper: -195650,
        liquidity: '916121146487060003',
        amount0Out: '499999999999999999966',
        amount1Out: '1490166371623',
        amount0In: '499999999999999999966',
        amount1In: '1490166371623',
      },
      schemaVersion: SCHEMA_VERSION,
      seq: i + 1,
      chainId: 31337,
      blockTimestamp: 1_790_000_000 + Math.floor(i / 1365),
      lastInBlock: true,
      context,
    });
  }
  const e0 = process.cpuUsage();
  const t0 = performance.now();
  const encoded = records.map((r) => ({ key: r.vault, value: encodeRecordAs(r, ENCODING) }));
  const encodeS = (performance.now() - t0) / 1000;
  const encodeCpu = process.cpuUsage(e0);
  const bytes = encoded.reduce((n, m) => n + m.value.length, 0);
  const publisher = await createPublisher({ brokers, clientId: 'ceiling-publisher', topic });
  try {
    for (const batch of [8_000]) {
      const c0 = process.cpuUsage();
      const p0 = performance.now();
      for (let i = 0; i < encoded.length; i += batch) await publisher.publishRaw(encoded.slice(i, i + batch));
      const s = (performance.now() - p0) / 1000;
      const cpu = process.cpuUsage(c0);
      console.log(
        `publisher (packages/log, publishRaw, batches of ${batch}): ${encoded.length} records of ` +
          `${Math.round(bytes / encoded.length)} bytes in ${s.toFixed(2)} s = ${Math.round(encoded.length / s)} records/s; ` +
          `CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s (${((cpu.user + cpu.system) / encoded.length) | 0} µs/record)`,
      );
    }
    console.log(
      `encode (${ENCODING}): ${encoded.length} records in ${encodeS.toFixed(2)} s, CPU ` +
        `${((encodeCpu.user + encodeCpu.system) / 1e6).toFixed(2)} s`,
    );
  } finally {
    await publisher.close();
    await admin.deleteTopic(topic).catch(() => {});
    await admin.close();
    await kafka.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
