/**
 * Soak: a long run of blocks through the whole pipeline — anvil → indexer process → Kafka →
 * projector process → Postgres — printing, per simulated day, what each part holds on disk and
 * in memory: the indexer's sequence rows and spans (migration 0019: compacted below the reorg
 * window), its other tables, the log, the ledger (ledger, equity points, record bodies), the rest
 * of the projection, and the RSS of the indexer, the projector and this database's Postgres
 * backends. Everything but the log and the ledger should be flat once the first reorg window is
 * behind. The last line: `soak: seqs rows/day X → …; rss indexer A MiB projector B MiB`.
 *
 * The chain: BENCH_VAULTS vaults (default 40, created by the bulk generator with a position each)
 * on one pool; every block a swap in the pool (every vault falls due for a mark within the
 * cadence, MARK_INTERVAL_BLOCKS 10) and BENCH_EVENTS_PER_BLOCK (default 2) vaults in turn collect
 * their fees. A simulated day is BENCH_BLOCKS_PER_DAY blocks (default 300), BENCH_DAYS days
 * (default 6); BENCH_REORG_WINDOW (default 128) is the indexer's REORG_WINDOW.
 *
 * Env: KAFKA_BROKERS / DATABASE_URL (else the local runners, as the tests resolve them),
 * BENCH_KEEP=true keeps the topic and database, LOG_LEVEL for the services (default warn).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { swapperAbi, vaultAbi } from '@vault-yield/contracts';
import { deployReferenceStack, devChain, playBulk, readSlot0, startAnvil } from '@vault-yield/devstack/chain';
import { dataDirFor } from '@vault-yield/devstack/kafka';
import { dropDatabase, ensureProjectDatabase, ensureRoles, ROLES } from '@vault-yield/devstack/postgres';
import { getSqrtRatioAtTick } from '@vault-yield/domain';
import { createLogAdmin } from '@vault-yield/log';
import { createPgPool, migrate, type Pool } from '@vault-yield/store';
import { resolveKafka, resolvePostgres } from '@vault-yield/test-kit/services';
import { type Address, encodeFunctionData, type Hex } from 'viem';

const VAULTS = Number(process.env.BENCH_VAULTS ?? 40);
const EVENTS_PER_BLOCK = Number(process.env.BENCH_EVENTS_PER_BLOCK ?? 2);
const BLOCKS_PER_DAY = Number(process.env.BENCH_BLOCKS_PER_DAY ?? 300);
const DAYS = Number(process.env.BENCH_DAYS ?? 6);
const REORG_WINDOW = Number(process.env.BENCH_REORG_WINDOW ?? 128);
const KEEP = process.env.BENCH_KEEP === 'true';
const SCHEMA = 'vault_yield';
const GROUP = 'soak';
const root = join(import.meta.dirname, '..');
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const hex = (n: bigint | number) => `0x${n.toString(16)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Tables by what they are: the groups printed per day. */
const GROUPS: Record<string, readonly string[]> = {
  seqs: ['indexer_vault_seqs', 'indexer_vault_seq_spans'],
  'indexer other': ['indexer_blocks', 'indexer_vaults', 'indexer_checkpoint', 'indexer_bad_logs'],
  ledger: ['ledger', 'equity_points', 'record_bundles'],
};

async function main() {
  const [kafka, postgres] = await Promise.all([resolveKafka(), resolvePostgres()]);
  console.log(`kafka: ${kafka.description}; postgres: ${postgres.description}`);
  const brokers = kafka.url.split(',');
  const topic = `bench-soak-${Date.now().toString(36)}`;
  const database = `bench_soak_${randomBytes(4).toString('hex')}`;
  await ensureRoles(postgres.url);
  const db = await ensureProjectDatabase(postgres.url, database);
  const pool = createPgPool({ url: db.writerUrl, schema: SCHEMA, applicationName: 'bench-soak', max: 2 });
  await migrate(pool, SCHEMA, ROLES.reader);

  const anvil = await startAnvil({ args: ['--gas-limit', '4000000000', '--preserve-historical-states'] });
  const children: ChildProcess[] = [];
  const killAll = () => {
    for (const c of children) c.kill('SIGKILL');
  };
  process.once('exit', killAll);
  try {
    const stack = await deployReferenceStack(anvil.rpcUrl);
    const g0 = performance.now();
    const bulk = await playBulk(stack, { vaults: VAULTS, eventsPerVault: 4, verify: false });
    console.log(
      `chain: ${VAULTS} vaults with a position each in ${((performance.now() - g0) / 1000).toFixed(1)} s ` +
        `(blocks ${stack.deploymentBlock}..${bulk.toBlock})`,
    );
    const driver = await createDriver(stack.rpcUrl, {
      agent: stack.accounts.agent,
      swapper: stack.swapper,
      deployer: stack.accounts.deployer,
    });
    const pool0 = stack.pools[0]!;
    const { tick } = await readSlot0(stack, pool0.address);
    // Swaps back and forth 20 ticks: volume in range every block, no lasting price move.
    const targets = [getSqrtRatioAtTick(tick + 20), getSqrtRatioAtTick(tick)];

    const env = {
      ...process.env,
      DATABASE_URL: db.writerUrl,
      KAFKA_BROKERS: kafka.url,
      KAFKA_TOPIC: topic,
      PROJECTION_SCHEMA: SCHEMA,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    };
    const indexer = start('services/indexer/src/main.ts', {
      ...env,
      RPC_URL: anvil.rpcUrl,
      FACTORY_ADDRESS: stack.factory,
      KAFKA_PARTITIONS: '4',
      POLL_INTERVAL_MS: '100',
      REORG_WINDOW: String(REORG_WINDOW),
    });
    children.push(indexer);
    // The projector needs the topic: the indexer creates it at start.
    await waitFor(
      async () => (await checkpoint(pool)) >= Number(bulk.toBlock),
      'the indexer to reach the bulk chain',
      120_000,
    );
    const projector = start('services/projector/src/main.ts', {
      ...env,
      CONSUMER_GROUP: GROUP,
      MARKET_PROJECTION: 'false',
      STATS_INTERVAL_MS: '0',
    });
    children.push(projector);

    console.log(
      `soak: ${DAYS} days of ${BLOCKS_PER_DAY} blocks, ${VAULTS} vaults, a swap and ${EVENTS_PER_BLOCK} vault events a block, ` +
        `REORG_WINDOW=${REORG_WINDOW}`,
    );
    // A cluster without autovacuum (a test cluster's setting) never reuses deleted rows' space:
    // the bench vacuums each day's end, as autovacuum would.
    const autovacuum =
      (await pool.query<{ autovacuum: string }>('show autovacuum')).rows[0]?.autovacuum === 'on';
    if (!autovacuum)
      console.log('postgres: autovacuum is off here; the bench runs VACUUM at each day’s end instead');
    console.log(
      'day  blocks     seq rows written  rows held  spans  | seqs    indexer  ledger   projection  log      | RSS indexer  projector  postgres',
    );
    const days: Day[] = [];
    const firstSizes: Record<string, number> = {};
    let next = 0;
    let written0 = await seqRowsWritten(pool);
    const t0 = performance.now();
    for (let d = 1; d <= DAYS; d++) {
      let last = 0n;
      for (let b = 0; b < BLOCKS_PER_DAY; b++) {
        const txs: Tx[] = [
          { from: 'deployer', to: stack.swapper, data: swapData(pool0.address, targets[b % 2]!) },
        ];
        for (let e = 0; e < EVENTS_PER_BLOCK; e++) {
          const v = bulk.vaults[next++ % bulk.vaults.length]!;
          txs.push({
            from: 'agent',
            to: v,
            data: encodeFunctionData({ abi: vaultAbi, functionName: 'collectFees', args: [1n] }),
          });
        }
        last = await driver.block(txs);
      }
      await waitFor(
        async () => (await checkpoint(pool)) >= Number(last),
        `the indexer to reach block ${last}`,
        300_000,
      );
      await waitFor(() => projectorCaughtUp(pool, brokers, topic), 'the projector to catch up', 300_000);
      if (!autovacuum) await pool.query('vacuum');
      const written = await seqRowsWritten(pool);
      const day: Day = {
        day: d,
        block: Number(last),
        written: written - written0,
        ...(await seqShape(pool)),
        sizes: await sizes(pool),
        logBytes: logBytes(brokers, topic),
        rss: {
          indexer: rss(indexer.pid),
          projector: rss(projector.pid),
          postgres: await postgresRss(pool, database),
        },
      };
      written0 = written;
      days.push(day);
      if (d === 2) Object.assign(firstSizes, await tableSizes(pool));
      const s = day.sizes;
      console.log(
        `${String(d).padStart(3)}  ${String(day.block).padStart(6)}  ${String(day.written).padStart(18)}  ${String(day.held).padStart(9)}  ${String(day.spans).padStart(5)}  | ` +
          `${mib(s.seqs!).padStart(5)}   ${mib(s['indexer other']!).padStart(5)}    ${mib(s.ledger!).padStart(6)}   ${mib(s.projection!).padStart(6)}      ${day.logBytes === null ? '  n/a' : mib(day.logBytes).padStart(6)}   | ` +
          `${mib(day.rss.indexer).padStart(7)} MiB  ${mib(day.rss.projector).padStart(5)} MiB  ${day.rss.postgres === null ? 'n/a' : `${mib(day.rss.postgres)} MiB`}`,
      );
    }
    const seconds = (performance.now() - t0) / 1000;
    console.log(
      '(sizes in MiB: pg_total_relation_size; log: the topic’s segments; RSS: VmRSS, Postgres: RssAnon of this database’s backends)',
    );
    const rowsPerDay = Math.round(
      days.slice(1).reduce((n, d) => n + d.written, 0) / Math.max(1, days.length - 1),
    );
    const firstFlat = days[1] ?? days[0]!;
    const lastDay = days.at(-1)!;
    const held = days.map((d) => d.held + d.spans);
    // Flat: the spans no more than on day 2, the rows held within the window's swing (the rows of
    // up to 64 blocks wait for the next compaction).
    const flat =
      lastDay.spans <= firstFlat.spans && Math.max(...held.slice(1)) <= 1.5 * Math.min(...held.slice(1));
    const grown = Object.entries(await tableSizes(pool))
      .map(([t, b]) => [t, b - (firstSizes[t] ?? 0)] as const)
      .filter(([, b]) => b > 64 * 1024)
      .sort((a, b) => b[1] - a[1]);
    console.log(
      `grown since day 2 (> 64 KiB): ${grown.map(([t, b]) => `${t} +${mib(b)} MiB`).join(', ') || 'nothing'}`,
    );
    console.log(
      `seqs: ${rowsPerDay} rows written a day; held (rows + spans) from day 2: ${held.slice(1).join(', ')}; ` +
        `seqs tables ${mib(firstFlat.sizes.seqs!)} → ${mib(lastDay.sizes.seqs!)} MiB; ledger ${mib(firstFlat.sizes.ledger!)} → ${mib(lastDay.sizes.ledger!)} MiB; ` +
        `log ${firstFlat.logBytes === null ? 'n/a' : mib(firstFlat.logBytes)} → ${lastDay.logBytes === null ? 'n/a' : mib(lastDay.logBytes)} MiB; ${seconds.toFixed(0)} s`,
    );
    console.log(
      `soak: seqs rows/day ${rowsPerDay} → ${flat ? 'flat after window' : 'NOT flat'} (${lastDay.held} rows + ${lastDay.spans} spans held); ` +
        `rss indexer ${mib(lastDay.rss.indexer)} MiB projector ${mib(lastDay.rss.projector)} MiB` +
        `${lastDay.rss.postgres === null ? '' : ` postgres ${mib(lastDay.rss.postgres)} MiB`}`,
    );
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => exited(c, 15_000)));
  } finally {
    killAll();
    process.off('exit', killAll);
    await pool.end();
    await anvil.stop();
    if (!KEEP) {
      const admin = await createLogAdmin({ brokers, clientId: 'bench-soak-admin' });
      await admin.deleteTopic(topic).catch(() => {});
      await admin.close();
      await dropDatabase(postgres.url, database).catch(() => {});
    }
    await Promise.all([kafka.stop(), postgres.stop()]);
  }
}

interface Day {
  day: number;
  block: number;
  /** Sequence rows the indexer wrote this day (held or compacted since). */
  written: number;
  held: number;
  spans: number;
  sizes: Record<string, number>;
  logBytes: number | null;
  rss: { indexer: number; projector: number; postgres: number | null };
}

interface Tx {
  from: 'agent' | 'deployer';
  to: Address;
  data: Hex;
}

function swapData(pool: Address, sqrtPriceX96: bigint): Hex {
  return encodeFunctionData({ abi: swapperAbi, functionName: 'swapToPrice', args: [pool, sqrtPriceX96] });
}

/** Sends each block's transactions in one JSON-RPC batch (explicit nonces) and mines it. */
async function createDriver(
  rpcUrl: string,
  accounts: { agent: Address; deployer: Address; swapper: Address },
): Promise<{ block(txs: readonly Tx[]): Promise<bigint> }> {
  const dev = devChain(rpcUrl);
  const nonces = new Map<Address, bigint>();
  for (const a of [accounts.agent, accounts.deployer])
    nonces.set(a, BigInt(await dev.rpc.call<string>('eth_getTransactionCount', [a, 'pending'])));
  await dev.setAutomine(false);
  return {
    async block(txs) {
      await dev.rpc.batch(
        txs.map((t) => {
          const from = accounts[t.from];
          const nonce = nonces.get(from)!;
          nonces.set(from, nonce + 1n);
          return {
            method: 'eth_sendTransaction',
            params: [
              {
                from,
                to: t.to,
                data: t.data,
                gas: hex(3_000_000),
                gasPrice: hex(2_000_000_000),
                nonce: hex(nonce),
              },
            ],
          };
        }),
      );
      await dev.mineOne();
      return dev.blockNumber();
    },
  };
}

function start(entry: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal === null) console.error(`${entry} exited with ${code}`);
  });
  return child;
}

function exited(c: ChildProcess, ms: number): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      c.kill('SIGKILL');
      resolve();
    }, ms);
    c.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

async function waitFor(ok: () => Promise<boolean>, what: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function checkpoint(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    'select max(block_number)::text as n from indexer_checkpoint',
  );
  return rows[0]?.n ? Number(rows[0].n) : -1;
}

async function projectorCaughtUp(pool: Pool, brokers: string[], topic: string): Promise<boolean> {
  const admin = await createLogAdmin({ brokers, clientId: 'bench-soak-admin' });
  let high = 0n;
  try {
    for (const o of await admin.offsets(topic)) high += BigInt(o.high);
  } finally {
    await admin.close();
  }
  const { rows } = await pool.query<{ n: string | null }>(
    'select sum(next_offset)::text as n from consumer_offsets where group_id = $1 and topic = $2',
    [GROUP, topic],
  );
  return BigInt(rows[0]?.n ?? '0') >= high;
}

/** Sequence rows written so far: those held, and those compacted into spans (each span counts its blocks). */
async function seqRowsWritten(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `select ((select count(*) from indexer_vault_seqs) +
             (select coalesce(sum(blocks), 0) from indexer_vault_seq_spans))::text as n`,
  );
  return Number(rows[0]!.n);
}

async function seqShape(pool: Pool): Promise<{ held: number; spans: number }> {
  const { rows } = await pool.query<{ held: string; spans: string }>(
    `select (select count(*) from indexer_vault_seqs)::text as held,
            (select count(*) from indexer_vault_seq_spans)::text as spans`,
  );
  return { held: Number(rows[0]!.held), spans: Number(rows[0]!.spans) };
}

/** pg_total_relation_size per table group; `projection`: every other table of the schema. */
async function sizes(pool: Pool): Promise<Record<string, number>> {
  const out: Record<string, number> = { projection: 0 };
  for (const g of Object.keys(GROUPS)) out[g] = 0;
  for (const [name, bytes] of Object.entries(await tableSizes(pool))) {
    const group = Object.keys(GROUPS).find((g) => GROUPS[g]!.includes(name)) ?? 'projection';
    out[group]! += bytes;
  }
  return out;
}

/** pg_total_relation_size of each table of the schema. */
async function tableSizes(pool: Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ name: string; bytes: string }>(
    `select c.relname as name, pg_total_relation_size(c.oid)::text as bytes
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = $1 and c.relkind = 'r'`,
    [SCHEMA],
  );
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.bytes)]));
}

/** Bytes of the topic's segments (`.log` files; the indexes are preallocated), where the broker is the local runner (else null). */
function logBytes(brokers: string[], topic: string): number | null {
  const port = Number(brokers[0]?.split(':')[1]);
  const dir = join(dataDirFor(port), 'kraft-logs');
  if (!Number.isInteger(port) || !existsSync(dir)) return null;
  let bytes = 0;
  for (const p of readdirSync(dir).filter((d) => d.startsWith(`${topic}-`)))
    for (const f of readdirSync(join(dir, p)).filter((f) => f.endsWith('.log')))
      bytes += statSync(join(dir, p, f)).size;
  return bytes;
}

/** A field of /proc/<pid>/status in bytes (0 when unreadable). */
function statusBytes(pid: number | undefined, field: string): number {
  if (pid === undefined) return 0;
  try {
    const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

const rss = (pid: number | undefined) => statusBytes(pid, 'VmRSS');

/** Private memory (RssAnon) of the Postgres backends serving this database; null where /proc says nothing. */
async function postgresRss(pool: Pool, database: string): Promise<number | null> {
  const { rows } = await pool.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [
    database,
  ]);
  const total = rows.reduce((n, r) => n + statusBytes(r.pid, 'RssAnon'), 0);
  return total > 0 ? total : null;
}

await main();
