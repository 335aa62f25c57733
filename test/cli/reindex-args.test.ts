import { createLogAdmin } from '@vault-yield/log';
import { createPgPool, type Pool } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopics, publish } from '../projector/support.js';
import { cliEnv, runCli } from './run.js';

/**
 * `vault-yield reindex` refuses bad arguments and a dangerous setup with a message naming the
 * problem and exit 2 (an unreachable chain: exit 1), before it writes anything: no checkpoint
 * namespace, no topic. Real Kafka and Postgres; no chain is needed to be refused.
 */
describe('vault-yield reindex: refusals', () => {
  let db: TestDatabase;
  let pool: Pool;
  const liveTopic = uniqueTopic('vault-records');
  const usedTopic = uniqueTopic('used');
  const newTopic = uniqueTopic('never-created');
  const emptyTopic = uniqueTopic('empty');
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase('reindex_args');
    pool = createPgPool({ url: db.writerUrl, applicationName: 'reindex-args', max: 1 });
    await createTopic(kafkaBrokers(), liveTopic, 2);
    await createTopic(kafkaBrokers(), usedTopic, 2);
    await createTopic(kafkaBrokers(), emptyTopic, 3);
    await publish(kafkaBrokers(), usedTopic, createHistoryGenerator({ vaults: 2, seed: 3 }).take(10));
    env = cliEnv(
      db,
      { topic: liveTopic, views: 'vault_yield_api' },
      {
        // Nothing listens on port 9: a run that got as far as the chain fails there (exit 1).
        RPC_URL: 'http://127.0.0.1:9',
        FACTORY_ADDRESS: `0x${'fa'.repeat(20)}`,
        INDEXER_SCHEMA: 'vault_yield_idx_live',
      },
    );
    const sw = await runCli(['rebuild', 'switch', '--schema', db.schema], env);
    expect(sw.code, sw.stderr).toBe(0);
  });

  afterAll(async () => {
    await pool?.end();
    await deleteTopics();
    await db?.drop();
  });

  const refused = async (args: string[], message: RegExp, extraEnv: Record<string, string> = {}) => {
    const res = await runCli(['reindex', ...args], { ...env, ...extraEnv });
    expect(res.stderr).toMatch(message);
    expect(res.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(res.stdout).toBe('');
    expect(res.code).toBe(2);
    return res;
  };

  it('prints its help with exit 0', async () => {
    const res = await runCli(['reindex', '--help'], env);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/usage: vault-yield reindex --topic NEW/);
    expect(res.stdout).toMatch(/MARK_INTERVAL_BLOCKS/);
  });

  it('refuses bad options', async () => {
    await refused([], /usage: vault-yield reindex --topic NEW/);
    await refused(['--topic', 'no spaces'], /--topic no spaces: expected a Kafka topic name/);
    await refused(['--topic', newTopic, '--partitions', '0'], /--partitions 0: /);
    await refused(['--topic', newTopic, '--start-block=-3'], /--start-block -3: /);
    await refused(
      ['--topic', newTopic, '--namespace', 'Bad-Name'],
      /--namespace Bad-Name: expected a lowercase SQL identifier/,
    );
    await refused(
      ['--topic', newTopic, '--schema', 'Bad-Name'],
      /--schema Bad-Name: expected a lowercase SQL identifier/,
    );
    await refused(['--topic', newTopic, '--grace', 'soon'], /invalid duration: soon/);
    await refused(['--topic', newTopic, '--quiet-for', 'later'], /invalid duration: later/);
    await refused(['--topic', newTopic, '--schema', db.schema], /--schema vault_yield: that schema is live/);
    await refused(['--topic', newTopic, '--bogus'], /Unknown option '--bogus'/);
    await refused(
      ['--topic', newTopic, '--no-rebuild', '--schema', 'vault_yield_x'],
      /--no-rebuild .*--schema/,
    );
  });

  it('names the missing or bad environment variables', async () => {
    const res = await refused(['--topic', newTopic], /invalid configuration/, {
      RPC_URL: '',
      FACTORY_ADDRESS: 'not-an-address',
    });
    expect(res.stderr).toMatch(/RPC_URL: .*\(unset\)/);
    expect(res.stderr).toMatch(/FACTORY_ADDRESS: expected an address/);
  });

  it('refuses to write the live topic, or a topic another run wrote', async () => {
    await refused(['--topic', liveTopic], new RegExp(`--topic ${liveTopic} is the live topic`));
    await refused(
      ['--topic', usedTopic],
      new RegExp(`--topic ${usedTopic} already holds 10 records, but namespace \\w+ has no checkpoint`),
    );
  });

  it('refuses a partition count an existing topic does not have (it would be ignored)', async () => {
    await refused(
      ['--topic', emptyTopic, '--namespace', 'vault_yield_idx_parts', '--partitions', '5'],
      new RegExp(`--partitions 5: topic ${emptyTopic} already has 3 partitions`),
    );
    // The topic's own count, or none given, passes the check (and fails later at the chain).
    for (const extra of [['--partitions', '3'], []]) {
      const res = await runCli(
        ['reindex', '--topic', emptyTopic, '--namespace', 'vault_yield_idx_parts2', ...extra],
        env,
      );
      expect(res.stderr).toMatch(/cannot read the factory/);
      expect(res.code).toBe(1);
    }
  });

  it('refuses a namespace that holds live state or a projection', async () => {
    await refused(['--topic', newTopic, '--namespace', 'vault_yield_idx_live'], /live indexer.s schema/);
    await refused(['--topic', newTopic, '--namespace', 'vault_yield_api'], /the views schema/);
    await refused(
      ['--topic', newTopic, '--namespace', 'vault_yield_same', '--schema', 'vault_yield_same'],
      /the schema the rebuild builds/,
    );
  });

  it('says which chain it could not read (exit 1)', async () => {
    const res = await runCli(
      ['reindex', '--topic', newTopic, '--namespace', 'vault_yield_idx_unreached'],
      env,
    );
    expect(res.stderr).toMatch(/cannot read the factory 0xfafa.* at RPC_URL http:\/\/127\.0\.0\.1:9/);
    expect(res.stderr).not.toMatch(/\n\s+at /);
    expect(res.code).toBe(1);
  });

  it('left nothing behind', async () => {
    // No checkpoint namespace was created (the live indexer's is only named, never created here).
    const { rows } = await pool.query<{ nspname: string }>(
      `select nspname from pg_namespace where nspname like 'vault_yield_idx%' or nspname = 'vault_yield_same'`,
    );
    expect(rows.map((r) => r.nspname)).toEqual([]);
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'reindex-args' });
    try {
      expect(await admin.listTopics()).not.toContain(newTopic);
    } finally {
      await admin.close();
    }
  });
});
