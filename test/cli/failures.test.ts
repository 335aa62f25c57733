import { type AnvilInstance, startAnvil } from '@vault-yield/devstack/chain';
import { createPgPool, migrate, type Pool } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopics } from '../projector/support.js';
import { type CliResult, cliEnv, runCli } from './run.js';

/**
 * What an operator sees when a command fails at run time (issue #48 items 6–8): one line on
 * stderr, `vault-yield <command>: <cause>: <cure>`, exit 1 (2: refused before anything is done),
 * no stack trace, no secret — an RPC provider's key in RPC_URL's path or query, a password in
 * DATABASE_URL. Real Postgres, Kafka and anvil; the endpoints that do not answer are closed ports.
 */
const RPC_KEY = 'KEY123';
const RPC_SECRET = 'SEKRET';
const UNREACHED_RPC = `http://127.0.0.1:1/v2/${RPC_KEY}?apikey=${RPC_SECRET}`;
const DB_PASSWORD = 'S3cretPassw0rd';
const SECRETS = new RegExp(`${RPC_KEY}|${RPC_SECRET}|${DB_PASSWORD}`);
const FACTORY = `0x${'fa'.repeat(20)}`;
const VAULT = `0x${'ab'.repeat(20)}`;
const CHAIN_ID = 31337;

/** One line on stderr and nothing that looks like a stack frame or a secret, anywhere. */
function expectOneLine(r: CliResult, command: string, code: 1 | 2): string {
  expect(r.code, r.stderr).toBe(code);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^vault-yield ${command}: `));
  expect(r.stdout + r.stderr).not.toMatch(SECRETS);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  return lines[0]!;
}

describe('run-time failures: one line naming the cause and the cure, no stack, no secret', () => {
  let db: TestDatabase;
  let pool: Pool;
  let anvil: AnvilInstance;
  let env: Record<string, string>;
  const liveTopic = uniqueTopic('vault-records');
  const reindexTopic = uniqueTopic('vault-records-v2');

  beforeAll(async () => {
    [db, anvil] = await Promise.all([createTestDatabase('cli_failures'), startAnvil()]);
    pool = createPgPool({ url: db.writerUrl, applicationName: 'cli-failures', max: 1 });
    await createTopic(kafkaBrokers(), liveTopic, 2);
    env = cliEnv(db, { topic: liveTopic, views: 'vault_yield_api' }, { FACTORY_ADDRESS: FACTORY });
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await anvil?.stop();
    await deleteTopics();
    await db?.drop();
  });

  it('republish with an RPC node that does not answer: the node, by scheme://host:port only', async () => {
    const r = await runCli(['republish', '--vault', VAULT, '--from-block', '1'], {
      ...env,
      RPC_URL: UNREACHED_RPC,
    });
    const line = expectOneLine(r, 'republish', 1);
    expect(line).toMatch(/the RPC node does not answer \(HTTP request failed.*\): is the node up\?/);
    expect(line).toMatch(/RPC_URL points at http:\/\/127\.0\.0\.1:1$/);
  }, 60_000);

  it('reindex with an RPC node that does not answer: the factory and the node, redacted', async () => {
    const r = await runCli(['reindex', '--topic', uniqueTopic('never-written'), '--no-rebuild'], {
      ...env,
      RPC_URL: UNREACHED_RPC,
    });
    const line = expectOneLine(r, 'reindex', 1);
    expect(line).toContain(`cannot read the factory ${FACTORY} at RPC_URL http://127.0.0.1:1: `);
  }, 60_000);

  it('republish of a vault the indexer does not know: one line with the cure', async () => {
    const r = await runCli(['republish', '--vault', VAULT, '--from-block', '1'], {
      ...env,
      RPC_URL: anvil.rpcUrl,
      CHAIN_ID: String(CHAIN_ID),
    });
    const line = expectOneLine(r, 'republish', 1);
    expect(line).toBe(
      `vault-yield republish: vault ${VAULT} is unknown to the indexer of chain ${CHAIN_ID} in ${db.schema}: ` +
        "check --vault, and that INDEXER_SCHEMA (default PROJECTION_SCHEMA) names the live indexer's schema",
    );
  }, 60_000);

  it('republish --from-block above the checkpoint: nothing to re-derive, said so (no "dry run")', async () => {
    await pool.query(
      `insert into ${db.schema}.indexer_checkpoint (chain_id, block_number, block_hash, topic, updated_at)
       values ($1, 50, '0x50', $2, now())`,
      [CHAIN_ID, liveTopic],
    );
    try {
      const r = await runCli(['republish', '--vault', VAULT, '--from-block', '60'], {
        ...env,
        RPC_URL: anvil.rpcUrl,
      });
      const line = expectOneLine(r, 'republish', 1);
      expect(line).toMatch(
        new RegExp(
          `^vault-yield republish: nothing to re-derive: --from-block 60 is above the indexer's checkpoint 50 \\(in ${db.schema}\\)`,
        ),
      );
      expect(r.stdout + r.stderr).not.toMatch(/dry run/);
    } finally {
      await pool.query(`delete from ${db.schema}.indexer_checkpoint`);
    }
  }, 60_000);

  it('reindex of a namespace checkpointed above the chain head (a restarted chain) is refused up front', async () => {
    const namespace = 'vault_yield_idx_restarted';
    await migrate(pool, namespace);
    await pool.query(
      `insert into ${namespace}.indexer_checkpoint (chain_id, block_number, block_hash, topic, updated_at)
       values ($1, 158, '0x9e', $2, now())`,
      [CHAIN_ID, reindexTopic],
    );
    await createTopic(kafkaBrokers(), reindexTopic, 2);
    const r = await runCli(['reindex', '--topic', reindexTopic, '--namespace', namespace, '--no-rebuild'], {
      ...env,
      RPC_URL: anvil.rpcUrl,
    });
    const line = expectOneLine(r, 'reindex', 2);
    expect(line).toMatch(
      new RegExp(
        `--namespace ${namespace} is checkpointed at block 158, above the chain head 0: it was written on another chain`,
      ),
    );
    expect(line).toMatch(/reindex into a new topic/);
    expect(r.stderr).not.toMatch(/reindexing|nothing to index/);
  }, 60_000);

  it('log tail with a broker that does not answer: one line within the connect budget, none per attempt', async () => {
    const r = await runCli(['log', 'tail', '--last', '1'], { ...env, KAFKA_BROKERS: '127.0.0.1:1' }, 30_000);
    expect(expectOneLine(r, 'log', 1)).toMatch(
      /^vault-yield log: the Kafka broker does not answer within KAFKA_CONNECT_BUDGET_MS=5000 \(.*ECONNREFUSED.*\): is Kafka up\? KAFKA_BROKERS lists 127\.0\.0\.1:1 \(a slow link: raise KAFKA_CONNECT_BUDGET_MS\)$/,
    );
  }, 40_000);

  it('log tail of a topic that does not exist: its name and the variable naming it', async () => {
    const missing = uniqueTopic('missing');
    const r = await runCli(['log', 'tail'], { ...env, KAFKA_TOPIC: missing });
    const line = expectOneLine(r, 'log', 1);
    expect(line).toMatch(
      new RegExp(
        `^vault-yield log: topic ${missing} does not exist on KAFKA_BROKERS .*: KAFKA_TOPIC .* names a topic`,
      ),
    );
    const viaOption = await runCli(['log', 'tail', '--topic', missing], env);
    expect(expectOneLine(viaOption, 'log', 1)).toMatch(/: --topic names a topic the broker does not hold/);
  }, 60_000);

  it('a database or schema that is not there: the variable to fix, one line', async () => {
    const noDb = await runCli(['status'], {
      ...env,
      DATABASE_URL: `postgres://postgres:${DB_PASSWORD}@127.0.0.1:5432/no_such_database`,
    });
    expect(expectOneLine(noDb, 'status', 1)).toBe(
      'vault-yield status: database "no_such_database" does not exist: DATABASE_URL names a database that does not exist on that server (create it, or fix the URL)',
    );
    const noSchema = await runCli(['republish', '--vault', VAULT, '--from-block', '1'], {
      ...env,
      RPC_URL: UNREACHED_RPC,
      CHAIN_ID: String(CHAIN_ID),
      INDEXER_SCHEMA: 'not_migrated',
    });
    expect(expectOneLine(noSchema, 'republish', 1)).toMatch(
      /: relation "indexer_vaults" does not exist: the schema is not migrated \(`vault-yield migrate`\) or not the one meant/,
    );
  }, 60_000);

  it('status with Postgres down: is Postgres up? and where DATABASE_URL points, without its password', async () => {
    const down = { ...env, DATABASE_URL: `postgres://vault:${DB_PASSWORD}@127.0.0.1:1/vault_yield` };
    const line = expectOneLine(await runCli(['status'], down), 'status', 1);
    expect(line).toBe(
      'vault-yield status: Postgres does not answer (ECONNREFUSED 127.0.0.1:1): is Postgres up? DATABASE_URL points at 127.0.0.1:1',
    );
    // --debug (or LOG_LEVEL=debug) adds the stack, redacted too.
    for (const r of [
      await runCli(['status', '--debug'], down),
      await runCli(['status'], { ...down, LOG_LEVEL: 'debug' }),
    ]) {
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr.split('\n')[0]).toBe(line);
      expect(r.stderr).toMatch(/^\s+at /m);
      expect(r.stdout + r.stderr).not.toMatch(SECRETS);
    }
  }, 60_000);
});
