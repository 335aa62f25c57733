import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repo = fileURLToPath(new URL('../..', import.meta.url));

/** One request the receiver got. */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** What the receiver answered (0: it cut the connection). */
  status: number;
  at: number;
}

/** What the receiver answers a request: a status, after an optional delay. */
export type Behaviour = (req: IncomingMessage, body: string) => number | Promise<number>;

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly received: Received[];
  behave: Behaviour;
  /** Stops listening (connections refused) until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real HTTP receiver on 127.0.0.1 (or `at.host`, another loopback address), on an OS-chosen
 * port (or `at.port`), kept across down/up.
 */
export async function startReceiver(
  behave: Behaviour = () => 200,
  at: { host?: string; port?: number } = {},
): Promise<Receiver> {
  const host = at.host ?? '127.0.0.1';
  const received: Received[] = [];
  const state = { behave };
  let server: Server;
  const make = () =>
    createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        void Promise.resolve(state.behave(req, body)).then((status) => {
          received.push({
            id: String(req.headers['webhook-id'] ?? ''),
            timestamp: String(req.headers['webhook-timestamp'] ?? ''),
            signature: String(req.headers['webhook-signature'] ?? ''),
            headers: req.headers,
            body,
            status,
            at: Date.now(),
          });
          res.writeHead(status, { 'content-type': 'text/plain' });
          res.end('ok');
        });
      });
    });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = make();
      server.once('error', reject);
      server.listen(port, host, () => {
        const a = server.address();
        resolve(a && typeof a === 'object' ? a.port : port);
      });
    });
  const port = await listen(at.port ?? 0);
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    url: `http://${host}:${port}/hook`,
    port,
    received,
    get behave() {
      return state.behave;
    },
    set behave(b: Behaviour) {
      state.behave = b;
    },
    down: stop,
    up: async () => {
      await listen(port);
    },
    close: stop,
  };
}

export type Verify = (secret: string, headers: IncomingMessage['headers'], rawBody: string) => unknown;

/**
 * The README's verification snippet ("Callbacks (webhooks)"), run as written: the code block that
 * exports `verifyWebhook`, saved as a module and imported.
 */
export async function readmeVerify(): Promise<Verify> {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Callbacks (webhooks)'));
  const block = /```js\n([\s\S]*?export function verifyWebhook[\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README.md: no verifyWebhook snippet in "Callbacks (webhooks)"');
  const file = join(tmpdir(), `verify-webhook-${process.pid}-${Date.now()}.mjs`);
  writeFileSync(file, block);
  const mod = (await import(pathToFileURL(file).href)) as { verifyWebhook: Verify };
  return mod.verifyWebhook;
}

/** The deliverer service (services/webhooks/src/main.ts) as a child process, the way compose runs it. */
export interface RunningDeliverer {
  child: ChildProcess;
  logs: string[];
  exited: Promise<number | null>;
  /**
   * Resolves once it holds the lock and delivers ('webhook deliverer running'), or has exited:
   * a test's deadlines start here, not while the process is still starting (seconds under load).
   */
  ready: Promise<void>;
}

/** The tests' WEBHOOK_SECRET_KEY (32 bytes, base64): the deliverer and `add` refuse to run without one. */
export const TEST_WEBHOOK_KEY = Buffer.alloc(32, 42).toString('base64');

/**
 * The deliverer service as its own process (`services/webhooks/src/main.ts`, as compose starts it;
 * `via: 'cli'`: through its alias `vault-yield webhooks run`); WEBHOOK_SECRET_KEY is
 * TEST_WEBHOOK_KEY unless `env` sets it.
 */
export function startDeliverer(
  env: Record<string, string>,
  via: 'service' | 'cli' = 'service',
): RunningDeliverer {
  const entry =
    via === 'cli' ? ['services/cli/src/main.ts', 'webhooks', 'run'] : ['services/webhooks/src/main.ts'];
  const child = spawn(process.execPath, ['--import', 'tsx', ...entry], {
    cwd: repo,
    // Receivers are on 127.0.0.1 (refused unless allowed); a paused endpoint is probed again soon.
    env: {
      ...process.env,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      WEBHOOK_SECRET_KEY: TEST_WEBHOOK_KEY,
      WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
      WEBHOOK_BREAKER_PROBE_MS: '200',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let running: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    running = resolve;
  });
  const collect = (d: Buffer) => {
    const lines = d.toString('utf8').split('\n').filter(Boolean);
    logs.push(...lines);
    if (lines.some((l) => l.includes('webhook deliverer running'))) running();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  void exited.then(() => running());
  return { child, logs, exited, ready };
}

/** Polls `check` until it holds or `ms` pass (then throws `what`). */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 30_000,
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The ledger row a delivery carries (its `data`). */
export interface DeliveredRow {
  id: string;
  vault: string;
  type: string;
  blockNumber: number;
  txIndex: number;
  logIndex: number;
  txHash: string;
  blockHash: string;
  chainId: number;
}

export const rowOf = (r: Received): DeliveredRow => (JSON.parse(r.body) as { data: DeliveredRow }).data;
