/**
 * Hostile clients beside ordinary ones (#42, "What done looks like"): `npm run bench:hostile`.
 *
 * Real parts: Kafka and Postgres (found as the tests find them), a fresh topic holding a generated
 * history of BENCH_VAULTS vaults (BENCH_RECORDS records) folded by the projector (its own process)
 * into a fresh database; then BENCH_LIVE_RPS records a second keep arriving for the whole run
 * (the projector folds them: commits, NOTIFYs, stream events, callbacks). The reader runs as a
 * child process with the product's defaults (rate limit, per-client concurrency, stream caps,
 * per-address connection caps, write and header deadlines), so its RSS is its own; the webhooks
 * deliverer (services/webhooks) too, delivering to receivers on loopback
 * (WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8), its retry period and parked retention shortened
 * (BENCH_RETRY_PERIOD_MS, BENCH_PARKED_RETENTION_MS) so their bound shows within the run.
 *
 * Ordinary clients, from addresses of their own (127.0.1.x): BENCH_ORDINARY_RPS GETs a second at
 * a fixed rate over the read endpoints (snapshot, equity, events, tx, vaults, strategies,
 * universe, pairs), and BENCH_ORDINARY_STREAMS subscribers reading their streams.
 *
 * 1. quiet: the ordinary clients alone for BENCH_QUIET_SECONDS (after a warm-up): p99 latency.
 * 2. hostile: HOSTILE_SECONDS (default 120) of the same beside hostile clients, run in a process of
 *    their own (bench/support/hostile-clients.ts) from 127.0.0.2… (one address each, so the
 *    per-address caps do not make it trivial): HEADs of the stream routes, streams closed during
 *    their opening, slow readers (a stream from the oldest id whose socket is never read),
 *    slowloris sockets (headers one byte a second), replays from the oldest retained
 *    Last-Event-ID; and two more webhook endpoints, one hanging (accepts, never answers) and one
 *    dead (connection refused), beside the healthy one.
 * 3. after the hostile clients are gone and BENCH_GRACE_MS: the reader's `reader_streams_open`
 *    must be the ordinary subscribers' count (else slots leaked).
 *
 * Measured: ordinary p99 in each phase and R = hostile / quiet; slots leaked; the dead endpoint's
 * callback rows (pending + parked) sampled every 2 s against their bound — the rows queued for
 * the healthy endpoint (the same rows) in the last retry period + parked retention + 20 s of
 * housekeeping — and no parked row older than its retention + 20 s; the reader's VmRSS max.
 * Last line: `hostile: ordinary p99 X ms (R × quiet run), slots leaked N, parked bounded, rss max
 * M MiB`; exit 1 when R > 2, a slot leaked or the parked rows were unbounded.
 *
 * Env: KAFKA_BROKERS / DATABASE_URL (else the local runners), HOSTILE_SECONDS (120),
 * BENCH_QUIET_SECONDS (30), BENCH_VAULTS (200), BENCH_RECORDS (60000), BENCH_LIVE_RPS (100),
 * BENCH_ORDINARY_RPS (40), BENCH_ORDINARY_STREAMS (4), BENCH_HOSTILE_ADDRESSES (16),
 * BENCH_GRACE_MS (5000), BENCH_KEEP=true keeps the topic and database.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { Agent, createServer, get, type IncomingMessage, request, type Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { dropDatabase } from '@vault-yield/devstack/postgres';
import { createLogAdmin, createPublisher } from '@vault-yield/log';
import { createPgPool, createWebhookStore, type Pool, webhookSecretKeys } from '@vault-yield/store';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { resolveKafka, resolvePostgres } from '@vault-yield/test-kit/services';
import { createBenchDatabase, ENCODING } from './log-fixture.js';
import { cpuSeconds, machineCpu } from './proc.js';
import {
  HOSTILE_KINDS,
  type HostileCounts,
  type HostileKind,
  type HostileSettings,
} from './support/hostile-clients.js';

const HOSTILE_SECONDS = Number(process.env.HOSTILE_SECONDS ?? 120);
const QUIET_SECONDS = Number(process.env.BENCH_QUIET_SECONDS ?? 30);
const VAULTS = Number(process.env.BENCH_VAULTS ?? 200);
const RECORDS = Number(process.env.BENCH_RECORDS ?? 60_000);
const LIVE_RPS = Number(process.env.BENCH_LIVE_RPS ?? 20);
const ORDINARY_RPS = Number(process.env.BENCH_ORDINARY_RPS ?? 20);
const ORDINARY_STREAMS = Number(process.env.BENCH_ORDINARY_STREAMS ?? 4);
const HOSTILE_ADDRESSES = Number(process.env.BENCH_HOSTILE_ADDRESSES ?? 4);
/** BENCH_KINDS: the hostile kinds to run, comma-separated (default all): which one costs what. */
const KINDS = new Set(
  (process.env.BENCH_KINDS ?? HOSTILE_KINDS.join(',')).split(',').map((k) => k.trim()),
) as Set<string>;
const on = (kind: HostileKind, n: number) => (KINDS.has(kind) ? n : 0);
const HOOKS = KINDS.has('webhooks') || process.env.BENCH_KINDS === undefined;
const GRACE_MS = Number(process.env.BENCH_GRACE_MS ?? 5_000);
const RETRY_PERIOD_MS = Number(process.env.BENCH_RETRY_PERIOD_MS ?? 10_000);
const PARKED_RETENTION_MS = Number(process.env.BENCH_PARKED_RETENTION_MS ?? 30_000);
const KEEP = process.env.BENCH_KEEP === 'true';
const SCHEMA = 'vault_yield';
/** The deliverer's housekeeping (prune, every 10 s) and a round's slack beyond the retention. */
const HOUSEKEEPING_SLACK_MS = 20_000;
const ADMIN_TOKEN = randomBytes(24).toString('hex');
const root = join(import.meta.dirname, '..');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
/** 0x-lowercase text of a column that may be text or bytea. */
const hexOf = (v: string) => (v.startsWith('\\x') ? `0x${v.slice(2)}` : v).toLowerCase();

function rssMiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Spawns a service (node --import tsx FILE ARGS) with `env`; its stdout lines go to `onLine`. */
function service(file: string, args: string[], env: Record<string, string>, onLine?: (line: string) => void) {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => onLine?.(line));
  return child;
}

async function stop(child: ChildProcess | undefined) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = once(child, 'exit');
  child.kill('SIGTERM');
  await gone;
}

/** An HTTP receiver on 127.0.0.1 answering 200 at once (counts what it got). */
async function healthyReceiver(): Promise<{ server: Server; url: string; received: () => number }> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const a = server.address();
  return {
    server,
    url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/hook`,
    received: () => received,
  };
}

/** A receiver that accepts connections and reads them, and never answers. */
async function hangingReceiver(): Promise<{ server: NetServer; url: string; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const a = server.address();
  return { server, url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/hook`, sockets };
}

/** A URL on 127.0.0.1 where nothing listens (connection refused): a port bound, then let go. */
async function deadUrl(): Promise<string> {
  const server = createNetServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const a = server.address();
  const port = typeof a === 'object' && a ? a.port : 0;
  await new Promise((r) => server.close(r));
  return `http://127.0.0.1:${port}/hook`;
}

/**
 * GET `url` from `localAddress` with `agent`: [status, ms from send to the body's end]. A kept-alive
 * socket the reader closed as it was reused (ECONNRESET before any answer) is tried once more, as
 * clients do: that race is the client's, not a refusal.
 */
function timedGet(
  url: URL,
  path: string,
  agent: Agent,
  localAddress: string,
  t0 = performance.now(),
): Promise<[number, number]> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        agent,
        localAddress,
        headers: { accept: 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve([res.statusCode ?? 0, performance.now() - t0]));
        res.on('error', () => resolve([0, performance.now() - t0]));
      },
    );
    req.setTimeout(30_000, () => req.destroy());
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (req.reusedSocket && err.code === 'ECONNRESET')
        resolve(timedGet(url, path, agent, localAddress, t0));
      else resolve([0, performance.now() - t0]);
    });
    req.end();
  });
}

/** reader_streams_open from the reader's /metrics (the operators' token). */
async function streamsOpen(url: string): Promise<number> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const text = await res.text();
  const m = /^reader_streams_open\s+(\d+)/m.exec(text);
  if (!m) throw new Error(`no reader_streams_open in /metrics (${res.status})`);
  return Number(m[1]);
}

/** Oldest stream cursor the reader resumes from (Last-Event-ID, as params.ts encodes it). */
async function oldestCursor(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ oldest: string | null }>(
    `select min(seq)::text as oldest from ${SCHEMA}.stream_commits`,
  );
  const seq = rows[0]?.oldest ?? '0';
  return Buffer.from(`c1:${seq}`, 'latin1').toString('base64url');
}

async function main() {
  const [kafka, postgres] = await Promise.all([resolveKafka(), resolvePostgres()]);
  console.log(`kafka: ${kafka.description}; postgres: ${postgres.description}`);
  const brokers = kafka.url.split(',');
  const topic = `bench-hostile-${Date.now().toString(36)}`;
  const db = await createBenchDatabase(postgres.url, 'hostile', SCHEMA);
  const admin = await createLogAdmin({ brokers, clientId: 'bench-hostile' });
  const pool = createPgPool({
    url: db.webhooksUrl,
    schema: SCHEMA,
    applicationName: 'bench-hostile',
    max: 2,
  });
  const children: ChildProcess[] = [];
  const servers: { close(): unknown }[] = [];
  const streams: IncomingMessage[] = [];
  let liveOn = true;
  let live: Promise<void> = Promise.resolve();
  try {
    await admin.ensureTopic({ topic, partitions: 2 });
    const publisher = await createPublisher({
      brokers,
      clientId: 'bench-hostile',
      topic,
      encoding: ENCODING,
    });
    const gen = createHistoryGenerator({ vaults: VAULTS, seed: 4242 });
    for (let done = 0; done < RECORDS; ) {
      const n = Math.min(20_000, RECORDS - done);
      await publisher.publish(gen.take(n));
      done += n;
    }
    console.log(`produced ${RECORDS} records for ${VAULTS} vaults (topic ${topic})`);

    // The projector folds the history, then the live records as they come.
    const projector = service('services/projector/src/main.ts', [], {
      KAFKA_BROKERS: brokers.join(','),
      DATABASE_URL: db.writerUrl,
      PROJECTION_SCHEMA: SCHEMA,
      KAFKA_TOPIC: topic,
      CONSUMER_GROUP: `bench-${topic}`,
      MIGRATE: 'false',
      MARKET_PROJECTION: 'false',
      LOG_LEVEL: 'warn',
    });
    children.push(projector);
    const folded = async () =>
      Number(
        (
          await pool.query<{ n: string | null }>(
            `select sum(next_offset)::text as n from ${SCHEMA}.consumer_offsets`,
          )
        ).rows[0]?.n ?? 0,
      );
    const t0 = performance.now();
    while ((await folded().catch(() => 0)) < RECORDS) {
      if (projector.exitCode !== null) throw new Error('the projector exited');
      await sleep(250);
    }
    console.log(`folded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    // Live records for the whole run, BENCH_LIVE_RPS a second in tenths of a second.
    live = (async () => {
      const per = Math.max(1, Math.round(LIVE_RPS / 10));
      while (liveOn) {
        const t = performance.now();
        await publisher.publish(gen.take(per));
        await sleep(Math.max(0, 100 - (performance.now() - t)));
      }
      await publisher.close();
    })();

    const vaults = (
      await pool.query<{ v: string }>(`select vault::text as v from ${SCHEMA}.vault_snapshot order by vault`)
    ).rows.map((r) => hexOf(r.v));
    const txs = (
      await pool.query<{ h: string }>(
        `select tx_hash::text as h from ${SCHEMA}.ledger order by random() limit 500`,
      )
    ).rows.map((r) => hexOf(r.h));
    if (vaults.length === 0 || txs.length === 0) throw new Error('the projection is empty');

    // Callbacks: the deliverer, and the healthy receiver's endpoint from the start.
    const key = randomBytes(32).toString('base64');
    const hooks = createWebhookStore(pool, SCHEMA, webhookSecretKeys(key));
    const healthy = await healthyReceiver();
    servers.push(healthy.server);
    const endpoint = async (url: string) =>
      (
        await hooks.addEndpoint({
          url,
          secret: `whsec_${randomBytes(32).toString('base64')}`,
          vaults: null,
          types: null,
          ledgerSchema: SCHEMA,
        })
      ).id;
    const healthyId = await endpoint(healthy.url);
    children.push(
      service('services/webhooks/src/main.ts', [], {
        DATABASE_URL: db.webhooksUrl,
        PROJECTION_SCHEMA: SCHEMA,
        VIEWS_SCHEMA: 'bench_no_views',
        WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
        WEBHOOK_SECRET_KEY: key,
        WEBHOOK_RETRY_PERIOD_MS: String(RETRY_PERIOD_MS),
        WEBHOOK_PARKED_RETENTION_MS: String(PARKED_RETENTION_MS),
        LOG_LEVEL: 'error',
      }),
    );

    // The reader: the product's defaults but for its port and the operators' token.
    let resolveUrl: (url: string) => void = () => {};
    const listening = new Promise<string>((r) => {
      resolveUrl = r;
    });
    const reader = service(
      'services/reader/src/main.ts',
      [],
      {
        DATABASE_URL: db.readerUrl,
        PROJECTION_SCHEMA: SCHEMA,
        PORT: '0',
        HOST: '127.0.0.1',
        ADMIN_TOKEN,
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
        NODE_ENV: 'production',
      },
      (line) => {
        if (!line.includes('reader listening')) return;
        const port = (JSON.parse(line) as { port?: number }).port;
        resolveUrl(`http://127.0.0.1:${port}`);
      },
    );
    children.push(reader);
    const url = await Promise.race([
      listening,
      once(reader, 'exit').then(() => {
        throw new Error('the reader exited before listening');
      }),
    ]);
    const target = new URL(url);
    const readerPid = reader.pid!;
    let rssMax = rssMiB(readerPid);
    const rssTimer = setInterval(() => {
      rssMax = Math.max(rssMax, rssMiB(readerPid));
    }, 250);

    // Ordinary subscribers: their own address each, reading everything.
    let events = 0;
    for (let i = 0; i < ORDINARY_STREAMS; i++) {
      const path = i === 0 ? '/v1/stream' : `/v1/vault/${vaults[i % vaults.length]}/stream`;
      const res = await new Promise<IncomingMessage>((resolve, reject) =>
        get(
          {
            host: target.hostname,
            port: target.port,
            path,
            agent: false,
            localAddress: `127.0.1.${100 + i}`,
          },
          resolve,
        ).on('error', reject),
      );
      if (res.statusCode !== 200) throw new Error(`ordinary stream refused: ${res.statusCode}`);
      res.on('data', (b: Buffer) => {
        events += b.toString('latin1').split('\nid:').length - 1;
      });
      res.on('error', () => {});
      streams.push(res);
    }

    // Ordinary GETs at a fixed rate from 127.0.1.1…: one address per 10 a second (the default
    // rate limit is 20 a second per client).
    const ordinaryAddresses = Array.from(
      { length: Math.max(1, Math.ceil(ORDINARY_RPS / 10)) },
      (_, i) => `127.0.1.${i + 1}`,
    );
    const agents = ordinaryAddresses.map(() => new Agent({ keepAlive: true, maxSockets: 4 }));
    const paths = [
      () => `/v1/vault/${vaults[Math.floor(Math.random() * vaults.length)]}/snapshot`,
      () => `/v1/vault/${vaults[Math.floor(Math.random() * vaults.length)]}/equity`,
      () => `/v1/vault/${vaults[Math.floor(Math.random() * vaults.length)]}/events?limit=50`,
      () => `/v1/tx/${txs[Math.floor(Math.random() * txs.length)]}`,
      () => '/v1/vaults?limit=50',
      () => '/v1/strategies',
      () => '/v1/universe',
      () => '/v1/universe/pairs',
    ];
    interface Phase {
      latencies: number[];
      statuses: Map<number, number>;
      /** Latencies by route (the path's first two segments). */
      byRoute: Map<string, number[]>;
    }
    const ordinary = async (seconds: number): Promise<Phase> => {
      const phase: Phase = { latencies: [], statuses: new Map(), byRoute: new Map() };
      const pending: Promise<void>[] = [];
      const start = performance.now();
      const interval = 1000 / ORDINARY_RPS;
      for (let i = 0; performance.now() - start < seconds * 1000; i++) {
        const at = start + i * interval;
        const wait = at - performance.now();
        if (wait > 0) await sleep(wait);
        const k = i % ordinaryAddresses.length;
        const path = paths[i % paths.length]!();
        const route = path.replace(/0x[0-9a-f]+/g, ':id').replace(/\?.*/, '');
        pending.push(
          timedGet(target, path, agents[k]!, ordinaryAddresses[k]!).then(([status, ms]) => {
            phase.latencies.push(ms);
            phase.byRoute.set(route, [...(phase.byRoute.get(route) ?? []), ms]);
            phase.statuses.set(status, (phase.statuses.get(status) ?? 0) + 1);
          }),
        );
      }
      await Promise.all(pending);
      return phase;
    };
    const routeLine = (p: Phase) =>
      [...p.byRoute].map(([r, xs]) => `${r} p99 ${pct(xs, 99).toFixed(0)}`).join(', ');
    const statusLine = (p: Phase) =>
      [...p.statuses].map(([s, n]) => `${s === 0 ? 'error' : s}×${n}`).join(' ');

    await ordinary(5); // warm-up
    let cpu0 = cpuSeconds(readerPid);
    const quiet = await ordinary(QUIET_SECONDS);
    const quietCpu = (100 * (cpuSeconds(readerPid) - cpu0)) / QUIET_SECONDS;
    const quietLoad = loadavg()[0] ?? Number.NaN;
    const quietP99 = pct(quiet.latencies, 99);
    console.log(`  quiet by route (ms): ${routeLine(quiet)}`);
    console.log(
      `quiet: load ${quietLoad.toFixed(1)}, reader CPU ${quietCpu.toFixed(0)} % of a core; ${quiet.latencies.length} ordinary GETs in ${QUIET_SECONDS} s: p50 ${pct(quiet.latencies, 50).toFixed(1)} ms p99 ${quietP99.toFixed(1)} ms (${statusLine(quiet)}); streams open ${await streamsOpen(url)}; rss ${rssMiB(readerPid).toFixed(0)} MiB`,
    );

    // Phase 2: the hanging and dead endpoints, then the hostile clients.
    const hanging = await hangingReceiver();
    servers.push(hanging.server, {
      close: () => {
        for (const x of hanging.sockets) x.destroy();
      },
    });
    if (HOOKS) await endpoint(hanging.url);
    const deadId = HOOKS ? await endpoint(await deadUrl()) : -1;
    const settings: HostileSettings = {
      url,
      seconds: HOSTILE_SECONDS,
      addresses: Object.fromEntries(
        HOSTILE_KINDS.map((kind, k) => [
          kind,
          Array.from({ length: HOSTILE_ADDRESSES }, (_, i) => `127.0.${11 + k}.${i + 1}`),
        ]),
      ) as Record<HostileKind, string[]>,
      vaults,
      oldest: await oldestCursor(pool),
      heads: on('head', 4),
      earlyCloses: on('early close', 4),
      slowReaders: on('slow reader', 16),
      slowloris: on('slowloris', 200),
      replays: on('replay', 4),
      replayMs: 5_000,
    };
    const hostile = fork(join(root, 'bench/support/hostile-clients.ts'), [JSON.stringify(settings)], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(hostile);
    let counts: HostileCounts = {};
    let hostileCpu = Number.NaN;
    hostile.on('message', (m: { counts?: HostileCounts; cpuSeconds?: number }) => {
      if (m.counts) counts = m.counts;
      if (m.cpuSeconds !== undefined) hostileCpu = m.cpuSeconds;
    });
    const machine0 = machineCpu();
    const hostileGone = once(hostile, 'exit');

    // Every 2 s: the oldest id to the hostile side, the dead endpoint's rows against their bound.
    const windowMs = RETRY_PERIOD_MS + PARKED_RETENTION_MS + HOUSEKEEPING_SLACK_MS;
    let parkedMax = { rows: 0, bound: 0, pending: 0, parked: 0 };
    let unbounded: string | null = null;
    let openMax = 0;
    const sampler = setInterval(async () => {
      try {
        if (hostile.connected) hostile.send({ oldest: await oldestCursor(pool) });
        openMax = Math.max(openMax, await streamsOpen(url));
        const { rows } = await pool.query<{ pending: string; parked: string; stale: string; bound: string }>(
          `select
             (select count(*) from ${SCHEMA}.webhook_deliveries where endpoint_id = $1 and state = 'pending')::text as pending,
             (select count(*) from ${SCHEMA}.webhook_deliveries where endpoint_id = $1 and state = 'parked')::text as parked,
             (select count(*) from ${SCHEMA}.webhook_deliveries where endpoint_id = $1 and state = 'parked'
                and done_at < now() - make_interval(secs => $3::float8 / 1000))::text as stale,
             (select count(*) from ${SCHEMA}.webhook_deliveries where endpoint_id = $2
                and created_at > now() - make_interval(secs => $4::float8 / 1000))::text as bound`,
          [deadId, healthyId, PARKED_RETENTION_MS + HOUSEKEEPING_SLACK_MS, windowMs],
        );
        const r = rows[0]!;
        const pending = Number(r.pending);
        const parked = Number(r.parked);
        const bound = Number(r.bound);
        if (pending + parked >= parkedMax.rows)
          parkedMax = { rows: pending + parked, bound, pending, parked };
        if (!unbounded && pending + parked > bound)
          unbounded = `${pending + parked} rows (${pending} pending, ${parked} parked) > ${bound} queued for the healthy endpoint in the last ${windowMs / 1000} s`;
        if (!unbounded && Number(r.stale) > 0)
          unbounded = `${r.stale} parked rows older than the retention + ${HOUSEKEEPING_SLACK_MS / 1000} s`;
      } catch {
        // (a sample missed: the next one counts)
      }
    }, 2_000);

    cpu0 = cpuSeconds(readerPid);
    const loud = await ordinary(HOSTILE_SECONDS);
    const loudCpu = (100 * (cpuSeconds(readerPid) - cpu0)) / HOSTILE_SECONDS;
    const machine1 = machineCpu();
    await hostileGone;
    await sleep(GRACE_MS);
    clearInterval(sampler);
    const openAfter = await streamsOpen(url);
    clearInterval(rssTimer);
    rssMax = Math.max(rssMax, rssMiB(readerPid));
    const loudP99 = pct(loud.latencies, 99);
    const ratio = loudP99 / quietP99;
    const leaked = openAfter - ORDINARY_STREAMS;
    // Told apart: a slot freed late (by a write deadline) from one never freed.
    let late = '';
    if (leaked > 0) {
      const t = performance.now();
      let n = openAfter;
      while (n > ORDINARY_STREAMS && performance.now() - t < 60_000) {
        await sleep(1_000);
        n = await streamsOpen(url);
      }
      late = ` (${n} open ${((performance.now() - t) / 1000).toFixed(0)} s later)`;
    }

    console.log(
      `hostile: reader CPU ${loudCpu.toFixed(0)} % of a core; ${loud.latencies.length} ordinary GETs in ${HOSTILE_SECONDS} s: p50 ${pct(loud.latencies, 50).toFixed(1)} ms p99 ${loudP99.toFixed(1)} ms (${statusLine(loud)})`,
    );
    console.log(`  hostile by route (ms): ${routeLine(loud)}`);
    if (machine0 && machine1)
      console.log(
        `  machine: ${machine1.cores} cores ${((100 * (machine1.busy - machine0.busy)) / (machine1.total - machine0.total)).toFixed(0)} % busy, load ${loadavg()[0]?.toFixed(1)}; the hostile clients' own process ${((100 * hostileCpu) / HOSTILE_SECONDS).toFixed(0)} % of a core`,
      );
    for (const [kind, c] of Object.entries(counts))
      console.log(
        `  ${kind}: ${Object.entries(c)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}`,
      );
    console.log(
      `  streams open: max ${openMax} during, ${openAfter} after the hostile clients left + ${GRACE_MS / 1000} s${late} (ordinary subscribers ${ORDINARY_STREAMS}, ${events} events received by them)`,
    );
    console.log(
      `  callbacks: healthy receiver got ${healthy.received()}; dead endpoint max ${parkedMax.rows} rows (${parkedMax.pending} pending, ${parkedMax.parked} parked), bound then ${parkedMax.bound} (rows queued in the last ${windowMs / 1000} s: retry ${RETRY_PERIOD_MS / 1000} s + parked retention ${PARKED_RETENTION_MS / 1000} s + ${HOUSEKEEPING_SLACK_MS / 1000} s)${unbounded ? `; UNBOUNDED: ${unbounded}` : ''}`,
    );
    const failed = ratio > 2 || leaked > 0 || unbounded !== null;
    console.log(
      `hostile: ordinary p99 ${loudP99.toFixed(1)} ms (${ratio.toFixed(2)} × quiet run), slots leaked ${Math.max(0, leaked)}, ${unbounded ? `parked unbounded (max ${parkedMax.rows}, bound ${parkedMax.bound})` : 'parked bounded'}, rss max ${rssMax.toFixed(0)} MiB`,
    );
    for (const a of agents) a.destroy();
    process.exitCode = failed ? 1 : 0;
  } finally {
    for (const s of streams) s.destroy();
    liveOn = false;
    await live.catch(() => {});
    for (const c of children.reverse()) await stop(c);
    for (const s of servers) s.close();
    await pool.end();
    if (!KEEP) {
      await admin.deleteTopic(topic).catch(() => {});
      await dropDatabase(postgres.url, db.database).catch(() => {});
    }
    await admin.close();
    await Promise.all([kafka.stop(), postgres.stop()]);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
