import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { dropDatabase, ensureProjectDatabase, ROLES } from '@vault-yield/devstack/postgres';
import { kafkaBrokers, postgresAdminUrl } from '@vault-yield/test-kit';

const bin = fileURLToPath(new URL('../../services/cli/bin/vault-yield.js', import.meta.url));

export interface DevStack {
  /** The reader's base URL (from the dashboard line, the first URL `dev` prints). */
  url: string;
  /** The local chain's RPC URL (the banner's `chain:` line). */
  rpcUrl: string;
  /** The environment an operator's `vault-yield` command runs with against this stack. */
  cliEnv: Record<string, string>;
  /** The lines `dev` printed on stdout before it began serving. */
  banner: string[];
  stop(): Promise<void>;
}

/**
 * `vault-yield dev` (what `npm start` runs) on the test Kafka and Postgres, a database of its own:
 * real anvil, the demo scenario, indexer, projector and reader. Resolves once the dashboard URL is
 * printed; stop() sends Ctrl-C, waits for the exit and drops the database. `oneChain`: the demo on
 * one chain (`--one-chain`), where every vault's bare address names one vault.
 */
export async function startDevStack(o: { oneChain?: boolean } = {}): Promise<DevStack> {
  const database = `t_dash_${randomBytes(4).toString('hex')}`;
  const args = [bin, 'dev', '--port', '0', '--no-live', ...(o.oneChain ? ['--one-chain'] : [])];
  const child: ChildProcess = spawn(process.execPath, args, {
    env: {
      ...process.env,
      KAFKA_BROKERS: kafkaBrokers().join(','),
      DATABASE_ADMIN_URL: postgresAdminUrl(),
      DATABASE_NAME: database,
      // Topics and groups of its own: dev.test.ts may run a demo on the same broker meanwhile.
      DEV_KAFKA_PREFIX: database,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let out = '';
  let stdout = '';
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    await exited;
    clearTimeout(timer);
    await dropDatabase(postgresAdminUrl(), database);
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout?.on('data', (d: Buffer) => {
        out += d;
        stdout += d;
        const m = /^dashboard:\s+(http:\/\/\S+)\/dashboard$/m.exec(stdout);
        if (m?.[1] && /Ctrl-C/.test(stdout)) resolve(m[1]);
      });
      child.stderr?.on('data', (d: Buffer) => {
        out += d;
      });
      child.on('exit', (code) => reject(new Error(`dev exited (${code}) before serving:\n${out}`)));
    });
    const banner = stdout.split('\n').filter((l) => /^\w+:\s+http/.test(l));
    const rpcUrl = /^chain:\s+(http:\/\/\S+)/m.exec(stdout)?.[1];
    if (!rpcUrl) throw new Error(`dev printed no chain line:\n${stdout}`);
    // dev's database as dev laid it out (idempotent): the roles' URLs, none built by hand.
    const roles = await ensureProjectDatabase(postgresAdminUrl(), database, { split: true });
    const cliEnv = {
      // As deployed: the writer runs, the migrator (MIGRATE_DATABASE_URL) creates and switches.
      DATABASE_URL: roles.writerUrl,
      MIGRATE_DATABASE_URL: roles.migratorUrl,
      WRITER_ROLE: ROLES.writer,
      KAFKA_BROKERS: kafkaBrokers().join(','),
      // dev's own names (services/cli/src/commands/dev.ts, kafkaNames and its defaults).
      KAFKA_TOPIC: `${database}-vault-records`,
      SCREEN_TOPIC: `${database}-screen-results`,
      CATALOGUE_TOPIC: `${database}-strategy-catalogue`,
      PROJECTION_SCHEMA: 'vault_yield',
      VIEWS_SCHEMA: 'vault_yield_api',
      READER_ROLE: ROLES.reader,
    };
    return { url, rpcUrl, cliEnv, banner, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
