import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ROLES } from '@vault-yield/devstack/postgres';
import { kafkaBrokers, type TestDatabase } from '@vault-yield/test-kit';

const bin = fileURLToPath(new URL('../../services/cli/bin/vault-yield.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `vault-yield …` as a separate process, the way an operator does. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
  cwd?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      ...(cwd ? { cwd } : {}),
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The environment every `vault-yield` command of a test runs with: the test database (its schema
 * as PROJECTION_SCHEMA), the test broker, the vault topic, the views schema and the reader role;
 * `extra` adds or overrides variables.
 */
export function cliEnv(
  db: Pick<TestDatabase, 'writerUrl' | 'schema'>,
  o: { topic: string; views: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: db.writerUrl,
    KAFKA_BROKERS: kafkaBrokers().join(','),
    KAFKA_TOPIC: o.topic,
    VIEWS_SCHEMA: o.views,
    PROJECTION_SCHEMA: db.schema,
    READER_ROLE: ROLES.reader,
    ...extra,
  };
}
