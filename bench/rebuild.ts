/**
 * Rebuild throughput: publishes BENCH_RECORDS (default 1,000,000) generated records across
 * BENCH_VAULTS (default 1,000) vaults into a fresh topic, then times `vault-yield rebuild` (the
 * real CLI, spawned) folding them from offset 0 into a fresh schema, building the indexes,
 * setting the tables logged and switching the views. Prints the phases, `rebuild: <records/s>
 * records/s` (records / wall time of the whole command, process start included), and last, against
 * the floor measured in the same run (bench/floor.ts: the topic consumed with an empty handler, the
 * rows COPYed into an unlogged scratch schema), `rebuild-cpu: R × floor (A µs a record in all, floor
 * F µs …)`, A the whole machine's CPU per record over the first variant's command (#30: R ≤ 2.0).
 *
 * Env: KAFKA_BROKERS / DATABASE_URL (else the local runners, as the tests resolve them),
 * BENCH_RECORDS, BENCH_VAULTS, BENCH_PARTITIONS (default 4), BENCH_RECORDS_PER_VAULT_BLOCK (default 1,
 * see log-fixture.ts), BENCH_KEEP=true keeps topic and database,
 * BENCH_REBUILD_ARGS (extra rebuild options, e.g. `--unlogged`), BENCH_VARIANTS (`;`-separated option
 * sets, e.g. `;--unlogged`: one rebuild of the same topic each; the last line reports the first).
 */

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROLES } from '@vault-yield/devstack/postgres';
import { createPgPool } from '@vault-yield/store';
import { createCostSampler } from './costs.js';
import { floorLine, measureFloor } from './floor.js';
import { createLogFixture } from './log-fixture.js';
import { machineCpu } from './proc.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 1_000_000);
const VAULTS = Number(process.env.BENCH_VAULTS ?? 1_000);
const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 4);
const KEEP = process.env.BENCH_KEEP === 'true';
/** Extra rebuild options, e.g. `--unlogged` (space-separated). */
const EXTRA = (process.env.BENCH_REBUILD_ARGS ?? '').split(' ').filter(Boolean);
/** `;`-separated option sets, one rebuild each (the first is the reported figure). */
const VARIANTS = (process.env.BENCH_VARIANTS ?? '').split(';');
const root = join(import.meta.dirname, '..');

async function main() {
  const fixture = await createLogFixture({
    name: 'rebuild',
    records: RECORDS,
    vaults: VAULTS,
    partitions: PARTITIONS,
    seed: 4242,
    schema: 'vault_yield',
  });
  const { brokers, topic, db } = fixture;
  const pool = createPgPool({ url: db.writerUrl, applicationName: 'bench-costs', max: 1 });
  try {
    // One rebuild per variant (extra rebuild options), each into its own schema, same topic.
    const figures: number[] = [];
    const machineUs: number[] = [];
    for (const [i, variant] of VARIANTS.entries()) {
      const args = [...EXTRA, ...variant.split(' ').filter(Boolean)];
      const start = performance.now();
      const m0 = machineCpu();
      const child = spawn(
        process.execPath,
        [
          join(root, 'services/cli/bin/vault-yield.js'),
          'rebuild',
          '--schema',
          `vault_yield_bench_${i}`,
          '--no-market',
          ...args,
        ],
        {
          cwd: root,
          env: {
            ...process.env,
            KAFKA_BROKERS: brokers.join(','),
            DATABASE_URL: db.writerUrl,
            KAFKA_TOPIC: topic,
            READER_ROLE: ROLES.reader,
            LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
          },
          stdio: ['ignore', 'inherit', 'inherit'],
        },
      );
      const costs = createCostSampler({ pool, brokers, topic, pids: () => [child.pid as number] });
      // Sampled while the rebuild runs: its process and backends are gone once it exits.
      const sampling = setInterval(() => void costs.sample().catch(() => {}), 1000);
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve)).finally(() =>
        clearInterval(sampling),
      );
      if (code !== 0) throw new Error(`rebuild exited with ${code}`);
      const seconds = (performance.now() - start) / 1000;
      const m1 = machineCpu();
      figures.push(RECORDS / seconds);
      machineUs.push(m0 && m1 ? ((m1.busy - m0.busy) * 1e6) / RECORDS : Number.NaN);
      console.log(
        `variant [${args.join(' ') || 'default'}]: ${RECORDS} records in ${seconds.toFixed(1)} s (process start, indexes, SET LOGGED, switch included) = ${Math.round(RECORDS / seconds)} records/s`,
      );
      for (const line of await costs.report(RECORDS, `vault_yield_bench_${i}`)) console.log(`  ${line}`);
    }
    console.log(`rebuild: ${Math.round(figures[0] ?? 0)} records/s`);
    const floor = await measureFloor({
      brokers,
      topic,
      records: RECORDS,
      url: db.writerUrl,
      schema: 'vault_yield_bench_0',
      unlogged: true,
    });
    console.log(floorLine('rebuild-cpu', machineUs[0] ?? Number.NaN, floor));
  } finally {
    await pool.end();
    await fixture.close(KEEP);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
