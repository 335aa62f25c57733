import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface StartAnvilOptions {
  /**
   * Chain id (`--chain-id`); default 31337. Several local chains (#45): anvils of different ids
   * with the same default accounts, so the same deployer gives the same contract addresses.
   */
  chainId?: number;
  /** Seconds between blocks (interval mining); omitted = automine (a block per transaction). */
  blockTime?: number;
  /** Extra anvil arguments, e.g. ['--gas-limit', '300000000']. */
  args?: string[];
  /** How long to wait for "Listening on …" (ms). */
  timeoutMs?: number;
  /**
   * How long stop() waits after SIGTERM before SIGKILL (default 3000 ms). Raise it with
   * `--dump-state`: anvil writes the state on exit, which takes seconds for a large chain.
   */
  stopGraceMs?: number;
}

export interface AnvilInstance {
  rpcUrl: string;
  chainId: number;
  pid: number;
  /** Kills this anvil (its own pid only) and waits for it to exit. */
  stop(): Promise<void>;
}

/** Anvil's default chain id (anvil 1.x, unless `--chain-id` is passed). */
export const ANVIL_CHAIN_ID = 31337;

/**
 * The anvil binary: the platform package's executable when present (so `pid` is anvil itself and
 * stop() kills exactly it), else the node_modules/.bin/anvil wrapper (which forwards signals).
 */
export function anvilBinary(): string {
  const platform = join(
    repoRoot,
    'node_modules',
    '@foundry-rs',
    `anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`,
    'bin',
    'anvil',
  );
  if (existsSync(platform)) return platform;
  const wrapper = join(repoRoot, 'node_modules', '.bin', 'anvil');
  if (existsSync(wrapper)) return wrapper;
  throw new Error(`anvil not found under ${repoRoot}/node_modules: run npm install (@foundry-rs/anvil)`);
}

/** Starts a fresh anvil on 127.0.0.1 with a free port (one instance per test file). */
export function startAnvil(opts: StartAnvilOptions = {}): Promise<AnvilInstance> {
  const args = ['--port', '0', '--host', '127.0.0.1'];
  if (opts.blockTime !== undefined) args.push('--block-time', String(opts.blockTime));
  if (opts.chainId !== undefined) args.push('--chain-id', String(opts.chainId));
  const extra = opts.args ?? [];
  args.push(...extra);
  const chainIdArg = extra.indexOf('--chain-id');
  const chainId = chainIdArg >= 0 ? Number(extra[chainIdArg + 1]) : (opts.chainId ?? ANVIL_CHAIN_ID);

  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) return Promise.reject(new Error('anvil failed to spawn'));

  return new Promise((resolvePromise, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`anvil did not report its port within ${opts.timeoutMs ?? 15_000} ms:\n${out}`));
    }, opts.timeoutMs ?? 15_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      // Keep draining output so anvil never blocks on a full pipe.
      child.stdout.off('data', onData);
      child.stdout.resume();
      child.stderr.resume();
      resolvePromise({
        rpcUrl: `http://127.0.0.1:${m[1]}`,
        chainId,
        pid,
        stop: () => stopChild(child, opts.stopGraceMs ?? 3000),
      });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited early (code ${code}, signal ${signal}):\n${out}`));
    });
  });
}

function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => {
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(force);
      res();
    });
    child.kill('SIGTERM');
  });
}
