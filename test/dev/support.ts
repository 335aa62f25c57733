import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dropDatabase } from '@vault-yield/devstack/postgres';
import { kafkaBrokers, postgresAdminUrl } from '@vault-yield/test-kit';

/** `vault-yield dev` (`npm start`) as a process, the way a developer runs it, for the tests of test/dev. */
export const bin = fileURLToPath(new URL('../../services/cli/bin/vault-yield.js', import.meta.url));
const databases: string[] = [];

/** Drops every database `newDatabase` named (a test file's afterAll). */
export async function dropDevDatabases(): Promise<void> {
  for (const d of databases.splice(0)) await dropDatabase(postgresAdminUrl(), d);
}

export interface Dev {
  child: ChildProcess;
  out: () => string;
  /** The reader's base URL, once printed. */
  ready: Promise<string>;
  exited: Promise<number | null>;
}

export function newDatabase(): string {
  const database = `t_dev_${randomBytes(4).toString('hex')}`;
  databases.push(database);
  return database;
}

export function startDev(
  database = newDatabase(),
  args: string[] = ['--no-live'],
  extraEnv: Record<string, string> = {},
): Dev {
  const child = spawn(process.execPath, [bin, 'dev', '--port', '0', ...args], {
    env: {
      ...process.env,
      KAFKA_BROKERS: kafkaBrokers().join(','),
      DATABASE_ADMIN_URL: postgresAdminUrl(),
      DATABASE_NAME: database,
      LOG_LEVEL: 'info',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const ready = new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = /reader:\s+(http:\/\/\S+)\/v1/.exec(out);
      if (m?.[1]) resolve(m[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`dev exited (${code}) before serving:\n${out}`)));
  });
  ready.catch(() => {});
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out: () => out, ready, exited };
}

/** Pids of the processes below `pid` whose name contains `name` (from /proc). */
export function descendants(pid: number, name: string): number[] {
  const parent = new Map<number, number>();
  const comm = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      comm.set(Number(entry), stat.slice(stat.indexOf('(') + 1, close));
      parent.set(Number(entry), Number(stat.slice(close + 2).split(' ')[1]));
    } catch {
      // the process ended while we looked
    }
  }
  const below = (p: number): boolean => {
    for (let q = parent.get(p); q !== undefined && q > 1; q = parent.get(q)) if (q === pid) return true;
    return false;
  };
  return [...comm].filter(([p, c]) => c.includes(name) && below(p)).map(([p]) => p);
}

export async function waitExit(dev: Dev, ms: number): Promise<number | null | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((r) => {
    timer = setTimeout(() => r('hung'), ms);
  });
  const outcome = await Promise.race([dev.exited, hung]);
  clearTimeout(timer);
  if (outcome === 'hung') dev.child.kill('SIGKILL');
  return outcome;
}
