import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

export interface ProjectorProcess {
  child: ChildProcess;
  /** Resolves with the exit code (null after a signal). */
  exited: Promise<number | null>;
  logFile: string;
  /** True once the process has exited. */
  dead(): boolean;
  /** True once it said "projector started" (info, the default level here; see watchStarted). */
  up(): boolean;
}

/**
 * Whether a projector process has said "projector started" on its stdout (logged at info, once its
 * consumer runs): from then on SIGTERM is its shutdown. A signal before that meets Node's default
 * action (exit by signal, code null).
 */
export function watchStarted(child: ChildProcess): () => boolean {
  let started = false;
  let seen = '';
  child.stdout?.on('data', (b: Buffer) => {
    if (started) return;
    seen = (seen + b.toString()).slice(-4096);
    started = seen.includes('"projector started"');
  });
  return () => started;
}

/** The real projector process (services/projector/src/main.ts), as an operator runs it. */
export function spawnProjector(name: string, env: Record<string, string>): ProjectorProcess {
  const logFile = join(tmpdir(), `vy-fault-${name}-${process.pid}.log`);
  const out = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/projector/src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      MIGRATE: 'false',
      MARKET_PROJECTION: 'false',
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      PROJECTOR_HEARTBEAT_MS: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(out, { end: false });
  const up = watchStarted(child);
  child.stderr?.pipe(out, { end: false });
  let isDead = false;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      isDead = true;
      resolve(code);
    }),
  );
  return { child, exited, logFile, dead: () => isDead, up };
}
