import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dropDatabase } from '@vault-yield/devstack/postgres';
import { kafkaBrokers, postgresAdminUrl } from '@vault-yield/test-kit';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `vault-yield dev`, the main job (`npm start`), run as a process the way a developer runs it:
 * it must serve the demo and, on Ctrl-C, stop every part it started and exit — also when the
 * chain under it has died (it once hung there).
 */

const bin = fileURLToPath(new URL('../../services/cli/bin/vault-yield.js', import.meta.url));
const databases: string[] = [];

afterAll(async () => {
  for (const d of databases) await dropDatabase(postgresAdminUrl(), d);
});

interface Dev {
  child: ChildProcess;
  out: () => string;
  /** The reader's base URL, once printed. */
  ready: Promise<string>;
  exited: Promise<number | null>;
}

function startDev(): Dev {
  const database = `t_dev_${randomBytes(4).toString('hex')}`;
  databases.push(database);
  const child = spawn(process.execPath, [bin, 'dev', '--port', '0', '--no-live'], {
    env: {
      ...process.env,
      KAFKA_BROKERS: kafkaBrokers().join(','),
      DATABASE_ADMIN_URL: postgresAdminUrl(),
      DATABASE_NAME: database,
      LOG_LEVEL: 'info',
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
function descendants(pid: number, name: string): number[] {
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

async function waitExit(dev: Dev, ms: number): Promise<number | null | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((r) => {
    timer = setTimeout(() => r('hung'), ms);
  });
  const outcome = await Promise.race([dev.exited, hung]);
  clearTimeout(timer);
  if (outcome === 'hung') dev.child.kill('SIGKILL');
  return outcome;
}

describe('vault-yield dev', () => {
  it('serves the demo vault, then stops every part it started on Ctrl-C and exits 0', async () => {
    const dev = startDev();
    const url = await dev.ready;
    // The URL is printed as soon as the reader listens; the projector catches up meanwhile.
    let vaults: { vault: string }[] = [];
    for (let i = 0; i < 120 && vaults.length === 0; i++) {
      vaults = (await (await fetch(`${url}/v1/vaults`)).json()) as { vault: string }[];
      if (vaults.length === 0) await new Promise((r) => setTimeout(r, 500));
    }
    expect(vaults.length).toBeGreaterThan(0);
    // The start says what it is doing: the deployment, then each step of the demo.
    expect(dev.out()).toContain('"msg":"deploying the reference contracts');
    for (const n of [1, 10]) expect(dev.out()).toContain(`"step":${n},"of":10,"msg":"demo scenario"`);
    const snap = await fetch(`${url}/v1/vault/${vaults[0]?.vault}/snapshot`);
    expect(snap.status).toBe(200);
    expect(((await snap.json()) as { status: string }).status).toMatch(
      /^(idle|aiming|earning|attention|exiting|suspended)$/,
    );

    dev.child.kill('SIGINT');
    expect(await waitExit(dev, 60_000)).toBe(0);
    for (const part of ['reader', 'projector', 'indexer', 'chain'])
      expect(dev.out()).toContain(`"msg":"${part} stopped"`);
    expect(dev.out()).not.toContain('did not stop in time');
  }, 240_000);

  it('exits 0 on Ctrl-C when the chain died under it, stopping every part, instead of hanging', async () => {
    const dev = startDev();
    await dev.ready;
    const anvils = descendants(dev.child.pid as number, 'anvil');
    expect(anvils).toHaveLength(1);
    process.kill(anvils[0] as number, 'SIGKILL');
    // Interrupt once the indexer has seen the dead chain (it retries, backing off, before it would
    // give up), so the stop has to cut through a retry in progress.
    for (let i = 0; !dev.out().includes('indexing step failed'); i++) {
      if (i >= 600 || dev.child.exitCode !== null)
        throw new Error(`the indexer never reported the dead chain:\n${dev.out().slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(dev.out()).not.toContain('indexer halted');
    dev.child.kill('SIGINT');
    expect(await waitExit(dev, 90_000)).toBe(0);
    for (const part of ['reader', 'projector', 'indexer', 'chain'])
      expect(dev.out()).toContain(`"msg":"${part} stopped"`);
    expect(dev.out()).not.toContain('did not stop in time');
  }, 240_000);
});
