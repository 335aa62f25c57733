/**
 * Projector throughput: publishes ≥ 1,000,000 generated records across ≥ 1,000 vaults into a fresh
 * topic, then times one projector process (the real `services/projector/src/main.ts`, spawned)
 * folding them all into a fresh database. Prints records/s, the projector's peak RSS and CPU per
 * record (bench/costs.ts), then the floor measured in the same run (bench/floor.ts: the same topic
 * consumed with an empty handler, the same rows COPYed); the last line is
 * `projector-cpu: R × floor (A µs a record in all, floor F µs …)`, A the whole machine's CPU per
 * record while the projector folded (#30: R ≤ 2.0).
 *
 * Env: KAFKA_BROKERS / DATABASE_URL (else the local runners, as the tests resolve them),
 * BENCH_RECORDS (default 1,000,000), BENCH_VAULTS (default 1,000), BENCH_PARTITIONS (default 4),
 * BENCH_INSTANCES (default 1: projector processes sharing the partitions in one consumer group),
 * BENCH_RECORDS_PER_VAULT_BLOCK (default 1, see log-fixture.ts), BENCH_KEEP=true keeps the topic
 * and database, BENCH_NODE_OPTIONS (default
 * `--max-old-space-size=384 --max-semi-space-size=32`, as docker-compose runs it: caps the V8 heap
 * so the projector's RSS stays bounded, and gives a batch's short-lived objects a larger young
 * generation; the projector holds at most PROJECTOR_CONCURRENCY batches of PROJECTOR_MAX_BATCH_BYTES).
 */

import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createPgPool } from '@vault-yield/store';
import { createCostSampler } from './costs.js';
import { floorLine, measureFloor } from './floor.js';
import { createLogFixture } from './log-fixture.js';
import { machineCpu, peakRss } from './proc.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 1_000_000);
const VAULTS = Number(process.env.BENCH_VAULTS ?? 1_000);
const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 4);
const KEEP = process.env.BENCH_KEEP === 'true';
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 1);
const NODE_OPTIONS = process.env.BENCH_NODE_OPTIONS ?? '--max-old-space-size=384 --max-semi-space-size=32';
const SCHEMA = 'vault_yield';
const root = join(import.meta.dirname, '..');
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

async function main() {
  const fixture = await createLogFixture({
    name: 'projector',
    records: RECORDS,
    vaults: VAULTS,
    partitions: PARTITIONS,
    seed: 2024,
    schema: SCHEMA,
  });
  const { brokers, topic, db } = fixture;
  try {
    const pool = createPgPool({
      url: db.writerUrl,
      schema: SCHEMA,
      applicationName: 'bench-progress',
      max: 1,
    });
    const progress = async () =>
      Number(
        (await pool.query<{ n: string | null }>('select sum(next_offset)::text as n from consumer_offsets'))
          .rows[0]?.n ?? 0,
      );

    const start = performance.now();
    const machine0 = machineCpu();
    console.log(`projector: node ${NODE_OPTIONS} --import tsx services/projector/src/main.ts`);
    const spawnOne = () =>
      spawn(
        process.execPath,
        [...NODE_OPTIONS.split(/\s+/).filter(Boolean), '--import', 'tsx', 'services/projector/src/main.ts'],
        {
          cwd: root,
          env: {
            ...process.env,
            KAFKA_BROKERS: brokers.join(','),
            DATABASE_URL: db.writerUrl,
            PROJECTION_SCHEMA: SCHEMA,
            KAFKA_TOPIC: topic,
            CONSUMER_GROUP: `bench-${topic}`,
            MIGRATE: 'false',
            // The vault projector alone: the strategy topics are not part of this run.
            MARKET_PROJECTION: 'false',
            LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
          },
          stdio: ['ignore', 'inherit', 'inherit'],
        },
      );
    // INSTANCES projectors in one consumer group share the partitions (the projector scales out).
    const children = Array.from({ length: INSTANCES }, spawnOne);
    let exited = false;
    for (const child of children)
      child.on('exit', () => {
        exited = true;
      });
    const costs = createCostSampler({
      pool,
      brokers,
      topic,
      pids: () => children.map((c) => c.pid as number),
    });
    let rss = 0;
    let last = 0;
    let lastReport = start;
    let lastSample = start;
    for (;;) {
      if (exited) throw new Error('projector exited before catching up');
      for (const child of children) rss = Math.max(rss, peakRss(child.pid as number));
      const n = await progress();
      if (n >= RECORDS) break;
      if (performance.now() - lastSample > 1000) {
        await costs.sample();
        lastSample = performance.now();
      }
      if (performance.now() - lastReport > 5000) {
        const rate = ((n - last) / (performance.now() - lastReport)) * 1000;
        console.log(`  ${n} / ${RECORDS} (${rate.toFixed(0)} records/s, rss peak ${mib(rss)} MiB)`);
        last = n;
        lastReport = performance.now();
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - start) / 1000;
    const machine1 = machineCpu();
    for (const child of children) rss = Math.max(rss, peakRss(child.pid as number));
    // Costs per record (CPU of projector, Postgres and broker; bytes in Kafka and Postgres): unlike
    // records/s, these hold on a machine shared with other work.
    const costLines = await costs.report(RECORDS, SCHEMA);
    await Promise.all(
      children.map((child) => {
        const gone = new Promise((r) => child.on('exit', r));
        child.kill('SIGTERM');
        return gone;
      }),
    );
    await pool.end();
    const rate = RECORDS / seconds;
    console.log(`folded ${RECORDS} records in ${seconds.toFixed(1)} s (process start included)`);
    console.log(`peak RSS of the projector: ${mib(rss)} MiB${INSTANCES > 1 ? ' (largest instance)' : ''}`);
    for (const line of costLines) console.log(line);
    console.log(`machine load ${loadavg()[0]?.toFixed(2)}`);
    console.log(`projector: ${rate.toFixed(0)} records/s`);
    const floor = await measureFloor({ brokers, topic, records: RECORDS, url: db.writerUrl, schema: SCHEMA });
    console.log(`floor: ${floor.rows} rows (${mib(floor.bytes)} MiB of binary COPY data)`);
    const allUs = machine0 && machine1 ? ((machine1.busy - machine0.busy) * 1e6) / RECORDS : Number.NaN;
    console.log(floorLine('projector-cpu', allUs, floor));
  } finally {
    await fixture.close(KEEP);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
