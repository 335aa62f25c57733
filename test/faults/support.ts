import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { createLogger, type Logger } from '@vault-yield/common';
import { alive, kafkaAnswers, startLocalKafka, stopLocalKafka } from '@vault-yield/devstack/kafka';
import { migratedDatabase, type TestDatabase } from '@vault-yield/test-kit';
import pg from 'pg';

/**
 * Parts a fault test may break without touching anybody else's: a Kafka broker and a Postgres
 * cluster of its own, on free ports, in temporary directories, stopped by their own pid files.
 * The shared broker and the machine's Postgres are never restarted.
 */

const run = promisify(execFile);

/**
 * A free port whose successor is free too (the broker's controller listens on port + 1), chosen
 * below the kernel's ephemeral range: a part restarted on the same port must find it free, and a
 * port in that range can be taken meanwhile by any socket's outgoing end (a CI run lost the
 * restarted broker to "Address already in use" that way). 29000–29199 and 31700+ are left to the
 * shared broker and the cluster tests.
 */
export async function freePortPair(): Promise<number> {
  const listen = (port: number) =>
    new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
  const [ephemeralLow] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
    .trim()
    .split(/\s+/)
    .map(Number);
  const low = 20_000;
  const high = Math.min(31_600, (ephemeralLow ?? 32_768) - 2);
  for (let i = 0; i < 200; i++) {
    const p = low + Math.floor(Math.random() * (high - low));
    if (p >= 29_000 && p < 29_200) continue;
    if ((await listen(p)) && (await listen(p + 1))) return p;
  }
  throw new Error(`no free pair of ports in ${low}..${high}`);
}

export interface OwnKafka {
  brokers: string[];
  /** Stops the broker (SIGTERM, by its recorded pid); its data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data: the topics and offsets are still there. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  destroy(): Promise<void>;
  /**
   * Freezes the broker (SIGSTOP to the pid it was started with): its sockets stay open and
   * nothing answers, as with a broker hung in a long GC pause or a dead host behind a live link.
   */
  freeze(): void;
  /** Lets a frozen broker go on (SIGCONT). */
  thaw(): void;
}

export async function startOwnKafka(): Promise<OwnKafka> {
  const port = await freePortPair();
  const dataDir = mkdtempSync(join(tmpdir(), 'vy-fault-kafka-'));
  let pid = 0;
  const start = async () => {
    ({ pid } = await startLocalKafka({ port, dataDir, heapMiB: 384, timeoutMs: 90_000 }));
  };
  await start();
  const brokers = [`127.0.0.1:${port}`];
  return {
    brokers,
    start,
    async stop() {
      await stopLocalKafka({ dataDir });
      // Down means down: nothing answers on the port any more.
      for (let i = 0; i < 100 && (await kafkaAnswers(brokers, 500)); i++)
        await new Promise((r) => setTimeout(r, 100));
    },
    freeze: () => {
      if (pid > 0) process.kill(pid, 'SIGSTOP');
    },
    thaw: () => {
      if (pid > 0) process.kill(pid, 'SIGCONT');
    },
    async destroy() {
      // A frozen broker cannot stop: let it go on first (a broker already gone has no pid to wake).
      if (pid > 0 && alive(pid)) process.kill(pid, 'SIGCONT');
      await stopLocalKafka({ dataDir }).catch(() => false);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

export interface OwnPostgres {
  adminUrl: string;
  port: number;
  /** A migrated project database (writer and read-only reader roles), as the harness makes them. */
  database(label: string): Promise<TestDatabase>;
  /** `pg_ctl stop -m immediate` (a crash: no checkpoint, open sessions cut). */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** initdb as the postgres OS user when run as root (initdb refuses root). */
async function asPostgres(cmd: string, args: string[]): Promise<void> {
  if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', cmd, ...args]);
  else await run(cmd, args);
}

/** `settings`: more server settings (`-c name=value` each), e.g. a longer `wal_writer_delay`. */
export async function startOwnPostgres(settings: Record<string, string> = {}): Promise<OwnPostgres> {
  if (!existsSync(join(PG_BIN, 'initdb'))) throw new Error(`PostgreSQL 15 binaries not found in ${PG_BIN}`);
  const port = await freePortPair();
  const root = mkdtempSync(join(tmpdir(), 'vy-fault-pg-'));
  const dataDir = join(root, 'data');
  const socketDir = join(root, 'socket');
  mkdirSync(socketDir);
  if (process.getuid?.() === 0) {
    const pgUid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const pgGid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    chownSync(root, pgUid, pgGid);
    chownSync(socketDir, pgUid, pgGid);
    chmodSync(root, 0o755);
  }
  await asPostgres(join(PG_BIN, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync']);
  const logFile = join(root, 'server.log');
  const pgCtl = (action: string, extra: string[] = []) =>
    asPostgres(join(PG_BIN, 'pg_ctl'), [action, '-D', dataDir, '-w', '-t', '60', ...extra]);
  const start = () =>
    pgCtl('start', [
      '-l',
      logFile,
      '-o',
      [
        `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60 -c shared_buffers=32MB`,
        ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`),
      ].join(' '),
    ]);
  await start();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    adminUrl,
    port,
    async database(label) {
      const database = `t_${label}`;
      return migratedDatabase(adminUrl, database, {}, async () => {});
    },
    stop: () => pgCtl('stop', ['-m', 'immediate']),
    start,
    async destroy() {
      if (existsSync(join(dataDir, 'postmaster.pid'))) {
        const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
        await pgCtl('stop', ['-m', 'immediate']).catch(() => {
          if (pid > 0) process.kill(pid, 'SIGKILL');
        });
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Polls `pred` every 100 ms; throws naming `what` after `timeoutMs`. */
export async function until(pred: () => Promise<boolean> | boolean, what: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A logger that keeps the last `keep` lines in memory, to be printed when a fault test fails
 * (`onTestFailed(() => recorder.print())`): a failure names its cause without a noisy pass.
 * With TEST_LOG_LEVEL set (as for the tests' other loggers) every line is printed as it comes.
 */
export function flightRecorder(name: string, keep = 4_000): { logger: Logger; print(): void } {
  const lines: string[] = [];
  const echo = (process.env.TEST_LOG_LEVEL ?? 'silent') !== 'silent';
  const destination = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      if (echo) process.stdout.write(chunk);
      lines.push(String(chunk));
      if (lines.length > keep) lines.splice(0, lines.length - keep);
      cb();
    },
  });
  return {
    logger: createLogger({ name, level: 'info', destination, format: 'json' }),
    print: () => process.stdout.write(`--- last ${lines.length} log lines of ${name} ---\n${lines.join('')}`),
  };
}

/** True when a plain connection to `url` succeeds. */
export async function pgAnswers(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await c.connect();
    await c.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}
