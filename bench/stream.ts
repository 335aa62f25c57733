/**
 * Live-stream bench: `npm run bench:stream`.
 *
 * A fresh database with BENCH_VAULTS vault snapshots; the reader as a child process (rate limit
 * off, stream caps raised); BENCH_STREAMS server-sent event streams held open on it, spread over
 * the vaults (`GET /v1/vault/{address}/stream`). Then BENCH_COMMITS projection commits, one
 * every BENCH_INTERVAL_MS, each written as the projector writes one (a ledger row and the
 * commit's number + NOTIFY through ProjectionTx.noteCommit, in one transaction): the time from
 * the start of that transaction to the row's arrival as an event on each stream following its
 * vault is one sample. Prints p50/p95 of those, the streams held and the reader's memory (RSS)
 * per stream, ending with `stream: p50 X ms p95 Y ms; N streams, Z KiB a stream`.
 *
 * Env: DATABASE_URL (admin URL, default the local cluster), BENCH_STREAMS (1000), BENCH_VAULTS
 * (50), BENCH_COMMITS (100), BENCH_INTERVAL_MS (50), BENCH_KEEP_DB=true to keep the database.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { createSseParser } from '@vault-yield/client';
import { dropDatabase, ensureProjectDatabase, ROLES } from '@vault-yield/devstack/postgres';
import { createPgPool, createProjectionStore, migrate } from '@vault-yield/store';
import { insertSnapshots, makeSnapshot, samplePayload, writer } from '@vault-yield/test-kit/reader';

const ADMIN = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const STREAMS = Number(process.env.BENCH_STREAMS ?? 1_000);
const VAULTS = Number(process.env.BENCH_VAULTS ?? 50);
const COMMITS = Number(process.env.BENCH_COMMITS ?? 100);
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 50);
const SCHEMA = 'vault_yield';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;

async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
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
      STREAM_MAX: String(STREAMS + 100),
      STREAM_MAX_PER_CLIENT: String(STREAMS + 100),
      HTTP_MAX_CONNECTIONS: String(STREAMS + 200),
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    const entry = JSON.parse(line) as { msg?: string; port?: number };
    if (entry.msg === 'reader listening') {
      lines.on('line', () => {}); // keep draining its log
      return { child, url: `http://127.0.0.1:${entry.port}` };
    }
  }
  throw new Error('reader exited before listening');
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

async function main() {
  const database = `bench_stream_${randomBytes(4).toString('hex')}`;
  const db = await ensureProjectDatabase(ADMIN, database);
  const migratePool = createPgPool({ url: db.writerUrl, applicationName: 'bench-migrate', max: 1 });
  await migrate(migratePool, SCHEMA, ROLES.reader);
  await migratePool.end();
  let child: ChildProcess | undefined;
  const aborts: AbortController[] = [];
  const pool = createPgPool({
    url: db.writerUrl,
    schema: SCHEMA,
    applicationName: 'bench-projector',
    max: 2,
  });
  try {
    const w = writer(db.writerUrl, SCHEMA);
    const snaps = Array.from({ length: VAULTS }, () => makeSnapshot());
    await insertSnapshots(w, snaps);
    await w.end();
    const vaults = snaps.map((s) => s.vault);
    const started = await startChild(db.readerUrl);
    child = started.child;
    const pid = child.pid!;
    await sleep(500);
    const rss0 = await rssKiB(pid);

    // txHash → commit start; arrivals per stream.
    const sent = new Map<string, number>();
    const samples: number[] = [];
    let opened = 0;
    const t0 = Date.now();
    const open = async (vault: string) => {
      const ac = new AbortController();
      aborts.push(ac);
      const res = await fetch(`${started.url}/v1/vault/${vault}/stream`, { signal: ac.signal });
      if (res.status !== 200 || !res.body) throw new Error(`stream refused: ${res.status}`);
      opened++;
      const parser = createSseParser((e) => {
        if (e.event !== 'ledger') return;
        const tx = /"txHash"\s*:\s*"(0x[0-9a-f]{64})"/.exec(e.data)?.[1];
        const at = tx === undefined ? undefined : sent.get(tx);
        if (at !== undefined) samples.push(performance.now() - at);
      });
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      void (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            parser.push(decoder.decode(value, { stream: true }));
          }
        } catch {}
      })();
    };
    for (let i = 0; i < STREAMS; i += 100)
      await Promise.all(
        Array.from({ length: Math.min(100, STREAMS - i) }, (_, j) => open(vaults[(i + j) % VAULTS]!)),
      );
    const openMs = Date.now() - t0;
    await sleep(1_000);
    const rss1 = await rssKiB(pid);

    const store = createProjectionStore(pool);
    const payload = JSON.stringify(samplePayload('deposit'));
    let block = 1_000_000;
    for (let i = 0; i < COMMITS; i++) {
      const vault = vaults[i % VAULTS]!;
      const txHash = hex(32);
      block += 1;
      const at = performance.now();
      sent.set(txHash, at);
      await store.transaction(async (tx) => {
        await tx.insertLedger([
          {
            chainId: 31337,
            blockHash: hex(32),
            txHash,
            logIndex: 0,
            vault,
            blockNumber: block,
            txIndex: 0,
            ts: Date.now(),
            type: 'deposit',
            payload,
          },
        ]);
        await tx.noteCommit([vault]);
      });
      await sleep(INTERVAL_MS);
    }
    await sleep(2_000);
    const rss2 = await rssKiB(pid);
    const expected = COMMITS * (STREAMS / VAULTS);
    const perStream = (Math.max(rss1, rss2) - rss0) / Math.max(1, opened);
    console.log(
      `${opened} streams opened in ${openMs} ms over ${VAULTS} vaults; reader RSS ${(rss0 / 1024).toFixed(0)} MiB idle, ${(rss1 / 1024).toFixed(0)} MiB with the streams, ${(rss2 / 1024).toFixed(0)} MiB after ${COMMITS} commits`,
    );
    console.log(
      `${samples.length} arrivals of ${Math.round(expected)} expected; commit start → event: p50 ${pct(samples, 50).toFixed(1)} ms, p95 ${pct(samples, 95).toFixed(1)} ms, max ${pct(samples, 100).toFixed(1)} ms`,
    );
    console.log(
      `stream: p50 ${pct(samples, 50).toFixed(1)} ms p95 ${pct(samples, 95).toFixed(1)} ms; ${opened} streams, ${perStream.toFixed(1)} KiB a stream`,
    );
  } finally {
    for (const ac of aborts) ac.abort();
    await pool.end();
    if (child) {
      child.kill('SIGTERM');
      await new Promise((r) => child?.once('exit', r));
    }
    if (process.env.BENCH_KEEP_DB !== 'true') await dropDatabase(ADMIN, database);
  }
}

await main();
