import { type AnvilInstance, startAnvil } from '@vault-yield/devstack/chain';
import { createPgPool, type Pool } from '@vault-yield/store';
import { createTestDatabase, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './run.js';

/**
 * Operator commands when one deployment follows several chains (#45): `status` per chain (RPC_URL
 * is one chain's node: its head counts for that chain's checkpoint only; held vaults by vault id,
 * with the republish command naming it; `--chain N`), and `republish` of a vault id, refused
 * when RPC_URL / CHAIN_ID is another chain's node. Real Postgres and anvil (chain 31337).
 */
const V = `0x${'ab'.repeat(20)}`;

/** What these tests read of `status --json`. */
interface StatusReport {
  chain: number | null;
  indexer: { rpcChainId: number | null; checkpoints: { chainId: number; behind: number | null }[] };
  held: { chainId: number; vault: string }[];
}
let db: TestDatabase;
let pool: Pool;
let anvil: AnvilInstance;
let env: Record<string, string>;
const topic = uniqueTopic('vault-records');

beforeAll(async () => {
  [db, anvil] = await Promise.all([createTestDatabase('cli_chains'), startAnvil()]);
  pool = createPgPool({ url: db.writerUrl, applicationName: 'cli-chains', max: 1 });
  env = cliEnv(
    db,
    { topic, views: 'vault_yield_api' },
    {
      FACTORY_ADDRESS: `0x${'fa'.repeat(20)}`,
      RPC_URL: anvil.rpcUrl,
    },
  );
  // Two chains' checkpoints; the same vault address held behind a gap on both.
  await pool.query(
    `insert into ${db.schema}.indexer_checkpoint (chain_id, block_number, block_hash, topic, updated_at)
     values (31337, 0, '0x00', $1, now()), (31338, 700, '0x07', $1, now())`,
    [topic],
  );
  for (const [chain, from] of [
    [31337, 10],
    [31338, 500],
  ] as const)
    await pool.query(
      `insert into ${db.schema}.vault_snapshot (vault, chain_id, owner, strategy, status, snapshot, state, last_record_id,
         records_applied, created_at, updated_at, held)
       values ($1, $2, '0x', 's', 'active', $3, '{}', '', 0, 0, 0, true)`,
      [
        V,
        chain,
        JSON.stringify({
          behind: { gap: { lastSeq: 4, missingFrom: 5, missingTo: 6, fromBlock: from, toBlock: from + 2 } },
        }),
      ],
    );
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await anvil?.stop();
  await db?.drop();
});

describe('status across chains', () => {
  it("counts RPC_URL's head for its own chain's checkpoint only, and names held vaults by id", async () => {
    const r = await runCli(['status', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as StatusReport;
    expect(report.chain).toBeNull();
    expect(report.indexer.rpcChainId).toBe(31337);
    const byChain = new Map(report.indexer.checkpoints.map((c) => [c.chainId, c]));
    expect(byChain.get(31337)?.behind).toBeGreaterThanOrEqual(0);
    // Anvil's head (about block 0) is no measure of chain 31338's checkpoint at 700.
    expect(byChain.get(31338)?.behind).toBeNull();
    expect(report.held.map((h) => `${h.chainId}:${h.vault}`).sort()).toEqual([`31337:${V}`, `31338:${V}`]);

    const text = await runCli(['status'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /indexer {7}chain 31338: block 700 .*chain head unknown \(RPC_URL is a node of chain 31337\)/,
    );
    expect(text.stdout).toMatch(/indexer {7}chain 31337: block 0 .*chain head \d+, \d+ blocks behind/);
    for (const [chain, from] of [
      [31337, 10],
      [31338, 500],
    ] as const)
      expect(text.stdout).toContain(
        `vault-yield republish --vault eip155:${chain}:${V} --from-block ${from} --to-block ${from + 2} (with chain ${chain}'s RPC_URL)`,
      );
  }, 60_000);

  it('--chain N: that chain alone', async () => {
    const r = await runCli(['status', '--chain', '31338', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as StatusReport;
    expect(report.chain).toBe(31338);
    expect(report.indexer.checkpoints.map((c) => c.chainId)).toEqual([31338]);
    expect(report.held.map((h) => h.chainId)).toEqual([31338]);
    const text = await runCli(['status', '--chain', '31338'], env);
    expect(text.stdout).toContain('held vaults   1 (chain 31338)');
    expect(text.stdout).not.toContain('chain 31337:');
    const bad = await runCli(['status', '--chain', 'zero'], env);
    expect(bad.code).toBe(2);
  }, 60_000);
});

describe('dead-letters across chains', () => {
  it('lists each letter by vault id (address alone when its chain is unknown); --chain N', async () => {
    await pool.query(
      `insert into ${db.schema}.dead_letters (topic, partition, "offset", reason, kind, vault, chain_id) values
         ($1, 0, 1, 'fold failed', 'fold', $2, 31337), ($1, 0, 2, 'fold failed', 'fold', $2, 31338),
         ($1, 0, 3, 'not a record', 'decode', null, null), ($1, 0, 4, 'bad head', 'decode', $2, null)`,
      [topic, V],
    );
    try {
      const all = await runCli(['dead-letters', 'list', '--schema', db.schema], env);
      expect(all.code, all.stderr).toBe(0);
      const lines = all.stdout.trim().split('\n');
      expect(lines).toHaveLength(4);
      expect(lines[0]).toContain(`eip155:31337:${V}  fold`);
      expect(lines[1]).toContain(`eip155:31338:${V}  fold`);
      expect(lines[2]).toContain('(vault unknown)  decode');
      expect(lines[3]).toContain(`${V} (chain unknown)  decode`);
      const one = await runCli(['dead-letters', 'list', '--chain', '31338', '--schema', db.schema], env);
      expect(one.code, one.stderr).toBe(0);
      expect(one.stdout).toContain(`eip155:31338:${V}`);
      expect(one.stdout).not.toContain('eip155:31337:');
      expect(one.stdout.trim().split('\n')).toHaveLength(3); // with the letters of no known chain
      const json = JSON.parse(
        (await runCli(['dead-letters', 'list', '--json', '--schema', db.schema], env)).stdout,
      ) as { chainId: number | null }[];
      expect(json.map((l) => l.chainId)).toEqual([31337, 31338, null, null]);
      const status = await runCli(['status'], env);
      expect(status.stdout).toContain(`eip155:31338:${V} fold: fold failed`);
      expect((await runCli(['dead-letters', 'retry', '--chain', '1'], env)).code).toBe(2);
    } finally {
      await pool.query(`delete from ${db.schema}.dead_letters`);
    }
  }, 120_000);
});

describe('republish across chains', () => {
  const republish = (args: string[], extra: Record<string, string> = {}) =>
    runCli(['republish', ...args, '--from-block', '1'], { ...env, ...extra });

  it('takes a vault id; refuses one of another chain than CHAIN_ID or the node, nothing published', async () => {
    const other = await republish(['--vault', `eip155:31338:${V}`], { CHAIN_ID: '31337' });
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(
      `eip155:31338:${V} is on chain 31338, but CHAIN_ID is 31337 (RPC_URL is its node): run republish with chain 31338's RPC_URL and CHAIN_ID`,
    );
    // No CHAIN_ID: the node is asked which chain it is.
    const node = await republish(['--vault', `eip155:31338:${V}`]);
    expect(node.code).toBe(2);
    expect(node.stderr).toContain(`is a node of chain 31337: run republish with chain 31338's RPC_URL`);
    expect(node.stderr).toContain(new URL(anvil.rpcUrl).host);
    const bare = await republish(['--vault', V, '--chain', '31338']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('is a node of chain 31337');
    const both = await republish(['--vault', `eip155:31337:${V}`, '--chain', '5']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('is on chain 31337, but --chain is 5');
    // The node's own chain: on to that chain's checkpoint (0: of two chains, the id's, not 31338's 700).
    const ok = await republish(['--vault', `eip155:31337:${V.toUpperCase().replace('0X', '0x')}`]);
    expect(ok.code, ok.stderr).toBe(1);
    expect(ok.stderr).toContain(`--from-block 1 is above the indexer's checkpoint 0 (in ${db.schema})`);
  }, 120_000);
});
