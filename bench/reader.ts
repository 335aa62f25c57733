/**
 * Reader bench: `npm run bench:reader`.
 *
 * Fills ≥ 10,000 vault snapshots into a fresh database, starts the reader as a child process
 * (read-only role, rate limit off, /bench/hello registered), then runs autocannon with 100
 * connections against GET /bench/hello (baseline: the same server and middleware, no database)
 * and GET /v1/vault/:address/snapshot over random vaults, alternating for a few rounds. Prints
 * the medians of req/s, p50 and p99 of both and their ratio; the last line is
 * `reader: <snapshot req/s> req/s`.
 *
 * Env: DATABASE_URL (admin URL, default the local cluster), BENCH_VAULTS (10000),
 * BENCH_DURATION_S (5 per run), BENCH_ROUNDS (3), BENCH_CONNECTIONS (100), BENCH_KEEP_DB=true to keep the database.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { dropDatabase, ensureProjectDatabase, ROLES } from '@vault-yield/devstack/postgres';
import { createPgPool, migrate } from '@vault-yield/store';
import { insertSnapshots, makeSnapshot, writer } from '@vault-yield/test-kit/reader';

// autocannon ships no types; the slice of its API used here.
interface Histogram {
  average: number;
  p50: number;
  p99: number;
}
interface AutocannonResult {
  requests: Histogram;
  latency: Histogram;
  non2xx: number;
  errors: number;
  timeouts: number;
}
interface RawRequest {
  method: string;
  path: string;
}
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  title: string;
  requests: { method: string; setupRequest: (req: RawRequest) => RawRequest }[];
}) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const ADMIN = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const VAULTS = Number(process.env.BENCH_VAULTS ?? 10_000);
const DURATION = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const SCHEMA = 'vault_yield';

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

function median(runs: Figures[]): Figures {
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return {
    rps: mid(runs.map((r) => r.rps)),
    p50: mid(runs.map((r) => r.p50)),
    p99: mid(runs.map((r) => r.p99)),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
  };
}

async function fill(writerUrl: string): Promise<string[]> {
  const w = writer(writerUrl, SCHEMA);
  const vaults: string[] = [];
  const statuses = ['earning', 'attention', 'idle', 'aiming', 'suspended', 'exiting'] as const;
  try {
    for (let i = 0; i < VAULTS; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, VAULTS - i) }, (_, j) =>
        makeSnapshot({
          status: statuses[(i + j) % statuses.length],
          valueMicros: 1_000_000_000 + (i + j) * 1_234,
          updatedAt: 1_735_689_600_000 + (i + j) * 1000,
        }),
      );
      await insertSnapshots(w, batch);
      vaults.push(...batch.map((s) => s.vault));
    }
    await w.query('analyze vault_snapshot');
  } finally {
    await w.end();
  }
  return vaults;
}

async function startChild(readerUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/reader/src/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: readerUrl,
      PROJECTION_SCHEMA: SCHEMA,
      PORT: '0',
      HOST: '127.0.0.1',
      RATE_LIMIT_RPS: '0',
      CLIENT_CONCURRENCY: '0',
      // BENCH_CONNECTIONS sockets from one loopback address: no per-address cap.
      MAX_CONNECTIONS_PER_ADDRESS: '0',
      BENCH_ROUTES: 'true',
      LOG_LEVEL: 'info',
      PG_POOL_MAX: process.env.PG_POOL_MAX ?? '10',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    const entry = JSON.parse(line) as { msg?: string; port?: number };
    if (entry.msg === 'reader listening') return { child, url: `http://127.0.0.1:${entry.port}` };
  }
  throw new Error('reader exited before listening');
}

async function run(url: string, title: string, path: () => string, duration = DURATION): Promise<Figures> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    title,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: path() }) }],
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

async function main() {
  const database = `bench_reader_${randomBytes(4).toString('hex')}`;
  const db = await ensureProjectDatabase(ADMIN, database);
  const migratePool = createPgPool({ url: db.writerUrl, applicationName: 'bench-migrate', max: 1 });
  await migrate(migratePool, SCHEMA, ROLES.reader);
  await migratePool.end();
  let child: ChildProcess | undefined;
  try {
    const t0 = Date.now();
    const vaults = await fill(db.writerUrl);
    console.log(`filled ${vaults.length} vault snapshots in ${Date.now() - t0} ms`);
    const started = await startChild(db.readerUrl);
    child = started.child;
    const random = () => `/v1/vault/${vaults[Math.floor(Math.random() * vaults.length)]}/snapshot`;

    // Warm-up: JIT, pool connections, prepared statements, Postgres buffers.
    await run(started.url, 'warm-up', random, 3);
    await run(started.url, 'warm-up', () => '/bench/hello', 2);

    // Alternate the two runs for ROUNDS rounds and take medians, so a noisy neighbour on the
    // machine skews both sides alike instead of one.
    const hellos: Figures[] = [];
    const snaps: Figures[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      hellos.push(await run(started.url, 'hello', () => '/bench/hello'));
      snaps.push(await run(started.url, 'snapshot', random));
    }
    const hello = median(hellos);
    const snap = median(snaps);
    const ratio = snap.rps / hello.rps;
    const row = (name: string, f: Figures) =>
      `${name.padEnd(10)} ${f.rps.toFixed(0).padStart(8)} req/s   p50 ${String(f.p50).padStart(4)} ms   p99 ${String(f.p99).padStart(4)} ms   non-2xx ${f.non2xx}   errors ${f.errors}`;
    console.log(
      `\n${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION} s each (medians), ${vaults.length} vaults`,
    );
    for (let i = 0; i < ROUNDS; i++)
      console.log(
        `  round ${i + 1}: hello ${hellos[i]!.rps.toFixed(0)} req/s, snapshot ${snaps[i]!.rps.toFixed(0)} req/s`,
      );
    console.log(row('hello', hello));
    console.log(row('snapshot', snap));
    console.log(
      `ratio snapshot/hello: ${(ratio * 100).toFixed(1)} % (target ≥ 50 %); snapshot p99 ${snap.p99} ms (target < 10 ms)`,
    );
    if (snap.non2xx > 0 || snap.errors > 0)
      console.log('WARNING: the snapshot run had errors or non-2xx responses');
    console.log(`reader: ${snap.rps.toFixed(0)} req/s`);
  } finally {
    if (child) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    if (process.env.BENCH_KEEP_DB !== 'true') await dropDatabase(ADMIN, database);
  }
}

await main();
