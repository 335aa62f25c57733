import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from './run.js';

/**
 * What an operator sees when a value is wrong: one line naming it, exit 2, no stack trace — and
 * never a secret: a password in DATABASE_URL or an RPC provider's key in RPC_URL is redacted in
 * the message of every service's main (indexer, projector, reader) and of the CLI.
 */
const PASSWORD = 'S3cretPassw0rd';
const RPC_KEY = 'K3yK3yK3yK3yK3y0123';
const SECRETS = new RegExp(`${PASSWORD}|${RPC_KEY}`);
const BAD_ENV = {
  // a refused TLS mode, so the URL (with its password) is what the message is about
  DATABASE_URL: `postgres://vault:${PASSWORD}@db.internal:5432/vault_yield?sslmode=bogus`,
  // a provider URL with its key in the path, and a factory that is no address (so it fails too)
  RPC_URL: `https://eth-mainnet.example.com/v2/${RPC_KEY}`,
  FACTORY_ADDRESS: 'nope',
  KAFKA_BROKERS: '127.0.0.1:9',
  PORT: '0',
};

const main = (service: string) =>
  fileURLToPath(new URL(`../../services/${service}/src/main.ts`, import.meta.url));

function runMain(service: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; out: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', main(service)], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('bad values: one line naming them, exit 2, no secret', () => {
  for (const service of ['indexer', 'projector', 'reader']) {
    it(`${service}: a config error names the variables, redacts the URL's password and key, shows no stack`, async () => {
      const r = await runMain(service, BAD_ENV);
      expect(r.code, r.out).toBe(2);
      expect(r.out).toMatch(/invalid configuration:/);
      expect(r.out).toMatch(
        /DATABASE_URL: .*\(got "postgres:\/\/vault:\*\*\*@db\.internal:5432\/\*\*\*\?\*\*\*"\)/,
      );
      expect(r.out).not.toMatch(SECRETS);
      expect(r.out).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack frame
    }, 90_000);
  }

  it('cli: the same environment for a command gives the same redacted line', async () => {
    const r = await runCli(['status'], BAD_ENV);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^vault-yield status: /);
    expect(r.stdout + r.stderr).not.toMatch(SECRETS);
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  }, 90_000);

  it('cli: a bad option value is one line naming the option (was a ZodError with its stack)', async () => {
    const r = await runCli(['migrate', '--schema', 'Bad-Name'], {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'vault-yield migrate: --schema Bad-Name: expected a lowercase SQL identifier',
    );
  }, 90_000);

  it('cli: --version prints the version of the repository', async () => {
    const { version } = JSON.parse(
      readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'),
    ) as { version: string };
    for (const flag of ['--version', '-v']) {
      const r = await runCli([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(`vault-yield ${version}`);
    }
  }, 90_000);
});
