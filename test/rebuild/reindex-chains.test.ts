import { vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  createVault,
  deployReferenceStack,
  devChain,
  type ReferenceStack,
  startAnvil,
  type TrackedVault,
  write,
} from '@vault-yield/devstack/chain';
import {
  createIndexer,
  type FollowingIndexer,
  followLiveIndexer,
  type Indexer,
  type IndexerConfig,
} from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import type { Projector } from '@vault-yield/projector';
import {
  createPgPool,
  getBuild,
  indexerCheckpoints,
  listBuilds,
  liveSchema,
  type Pool,
  schemaChecksums,
} from '@vault-yield/store';
import {
  createTestDatabase,
  kafkaBrokers,
  step,
  type TestDatabase,
  uniqueTopic,
} from '@vault-yield/test-kit';
import { readTopic } from '@vault-yield/test-kit/indexer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli/run.js';
import { projector } from '../projector/support.js';
import { caughtUp } from './support.js';

/**
 * `vault-yield reindex` over a deployment of two chains (#45): two anvils (31337, 31338, the same
 * deployer: the same factory and vault address), an indexer per chain on one schema and one live
 * topic, a projector folding both. Each chain is cut into the SAME new topic and checkpoint
 * namespace by a run with its own environment; the switch waits until every chain the live
 * indexers follow was cut (refused naming the missing chain), then the projection built from the
 * new log equals the live one table by table — both chains' vaults.
 */
const VIEWS = 'vault_yield_api';
const A = 31337;
const B = 31338;

describe('vault-yield reindex, two chains', () => {
  const liveTopic = uniqueTopic('chains-live');
  const newTopic = uniqueTopic('chains-v2');
  const namespace = `vault_yield_idx_${newTopic.replace(/[^a-z0-9]+/g, '_')}`.slice(0, 63);
  let anvilA: AnvilInstance;
  let anvilB: AnvilInstance;
  let stackA: ReferenceStack;
  let stackB: ReferenceStack;
  let db: TestDatabase;
  let pool: Pool;
  let live: Projector;
  let env: Record<string, string>;
  let envA: Record<string, string>;
  let envB: Record<string, string>;
  const liveCheckpoints = new Map<number, number>();
  let vaultB: TrackedVault;
  const followers: FollowingIndexer[] = [];

  const accrue = (stack: ReferenceStack, vault: TrackedVault, amount: bigint) =>
    write(stack.clients, stack.accounts.agent, vault.address, vaultAbi, 'accrueRewards', [amount]);
  const configOf = (rpcUrl: string, factory: string, chainId: number): IndexerConfig => ({
    rpcUrl,
    chainId,
    factory,
    kafka: { brokers: kafkaBrokers(), topic: liveTopic, partitions: 4 },
    databaseUrl: db.writerUrl,
    schema: db.schema,
    pollIntervalMs: 50,
    confirmations: 0,
  });
  const indexerOf = (rpcUrl: string, factory: string, chainId: number): Indexer =>
    createIndexer(configOf(rpcUrl, factory, chainId));

  beforeAll(async () => {
    [anvilA, anvilB] = await Promise.all([startAnvil({ chainId: A }), startAnvil({ chainId: B })]);
    stackA = await deployReferenceStack(anvilA.rpcUrl);
    stackB = await deployReferenceStack(anvilB.rpcUrl);
    const vaultA = await createVault(stackA, stackA.accounts.owners[0]!, stackA.pools[0]!, 'two-chains');
    vaultB = await createVault(stackB, stackB.accounts.owners[0]!, stackB.pools[0]!, 'two-chains');
    // B has one vault more, and other histories under the shared address.
    await createVault(stackB, stackB.accounts.owners[0]!, stackB.pools[0]!, 'b-only');
    await accrue(stackA, vaultA, 111n);
    await accrue(stackB, vaultB, 222n);
    await accrue(stackB, vaultB, 333n);
    db = await createTestDatabase('reindex_chains');
    pool = createPgPool({ url: db.writerUrl, applicationName: 'reindex-chains-test', max: 2 });

    // The live deployment: an indexer per chain, one schema, one topic; then stopped (quiet chains).
    const indexers = [
      indexerOf(anvilA.rpcUrl, stackA.factory, A),
      indexerOf(anvilB.rpcUrl, stackB.factory, B),
    ];
    await step('live indexers start', Promise.all(indexers.map((i) => i.start())), 60_000);
    const heads = await Promise.all(
      [anvilA, anvilB].map(async (a) => Number(await devChain(a.rpcUrl).blockNumber())),
    );
    await step(
      'live indexers reach the heads',
      Promise.all(indexers.map((i, n) => i.waitFor(heads[n]!))),
      60_000,
    );
    await Promise.all(indexers.map((i) => i.stop()));
    for (const c of await indexerCheckpoints(pool, db.schema)) liveCheckpoints.set(c.chainId, c.blockNumber);
    expect([...liveCheckpoints.keys()].sort()).toEqual([A, B]);

    live = projector({
      brokers: kafkaBrokers(),
      url: db.writerUrl,
      schema: db.schema,
      topic: liveTopic,
      group: 'live',
    });
    await step('projector start', live.start(), 30_000);
    await caughtUp(pool, db.schema, 'live', liveTopic);
    await live.stop();

    env = cliEnv(
      db,
      { topic: liveTopic, views: VIEWS },
      { SCREEN_TOPIC: uniqueTopic('screen-none'), CATALOGUE_TOPIC: uniqueTopic('catalogue-none') },
    );
    envA = { ...env, RPC_URL: anvilA.rpcUrl, CHAIN_ID: String(A), FACTORY_ADDRESS: stackA.factory };
    envB = { ...env, RPC_URL: anvilB.rpcUrl, CHAIN_ID: String(B), FACTORY_ADDRESS: stackB.factory };
    const sw = await step(
      'rebuild switch',
      runCli(['rebuild', 'switch', '--schema', db.schema], env),
      60_000,
    );
    expect(sw.code, sw.stderr).toBe(0);
  }, 240_000);

  afterAll(async () => {
    for (const f of followers) await f.stop().catch(() => {});
    await live?.stop().catch(() => {});
    await anvilA?.stop();
    await anvilB?.stop();
    await pool?.end();
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'reindex-chains-test' });
    for (const t of [liveTopic, newTopic]) await admin.deleteTopic(t).catch(() => {});
    await admin.close();
    await db?.drop();
  });

  it('cuts one chain, then refuses to switch while the other chain is missing, naming it and its command', async () => {
    const res = await runCli(['reindex', '--topic', newTopic, '--partitions', '3'], envA, 170_000);
    expect(res.stdout).toMatch(
      new RegExp(`reindexed ${newTopic} to block ${liveCheckpoints.get(A)} \\(.*\\) for chain ${A}:`),
    );
    expect(res.stdout).toContain(
      `chain ${B}: not cut into ${newTopic} (live at block ${liveCheckpoints.get(B)})`,
    );
    expect(res.stderr).toContain(`missing from namespace ${namespace} (cut: ${A})`);
    expect(res.stderr).toContain(
      `CHAIN_ID=${B} FACTORY_ADDRESS=<its factory> vault-yield reindex --topic ${newTopic} --namespace ${namespace} --no-rebuild`,
    );
    expect(res.code, res.stderr).toBe(2);
    // Nothing built, nothing switched.
    expect(await liveSchema(pool, VIEWS)).toBe(db.schema);
    expect((await listBuilds(pool, VIEWS)).filter((b) => b.purpose === 'reindex')).toEqual([]);
    // The namespace holds chain A's checkpoint only.
    expect(
      (await indexerCheckpoints(pool, namespace)).map((c) => [c.chainId, c.blockNumber, c.topic]),
    ).toEqual([[A, liveCheckpoints.get(A), newTopic]]);
  }, 200_000);

  it('cuts the other chain into the same topic and namespace beside it; a re-run resumes', async () => {
    const b = await runCli(['reindex', '--topic', newTopic, '--no-rebuild'], envB, 170_000);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toMatch(
      new RegExp(`reindexed ${newTopic} to block ${liveCheckpoints.get(B)} \\(.*\\) for chain ${B}:`),
    );
    expect(b.stdout).toContain(`chain ${A}: cut into ${newTopic} to block ${liveCheckpoints.get(A)}`);
    expect(b.stdout).toContain(`chain ${B}: cut into ${newTopic} to block ${liveCheckpoints.get(B)}`);
    expect(b.stdout).not.toMatch(/next: cut chain/);
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'reindex-chains-test' });
    try {
      const before = await admin.offsets(newTopic);
      const again = await runCli(['reindex', '--topic', newTopic, '--no-rebuild'], envA, 120_000);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(/0 records published/);
      expect(await admin.offsets(newTopic)).toEqual(before);
    } finally {
      await admin.close();
    }
    expect((await indexerCheckpoints(pool, namespace)).map((c) => [c.chainId, c.blockNumber])).toEqual([
      [A, liveCheckpoints.get(A)],
      [B, liveCheckpoints.get(B)],
    ]);
  }, 300_000);

  it('switches once every chain is cut: both chains served as before (the projection equals the live one)', async () => {
    const res = await runCli(
      ['reindex', '--topic', newTopic, '--schema', 'vault_yield_rxc', '--group', 'reindex-rxc'],
      envB,
      170_000,
    );
    expect(res.stdout).toMatch(/switched vault_yield_api → vault_yield_rxc/);
    expect(res.code, res.stderr).toBe(0);
    expect(await liveSchema(pool, VIEWS)).toBe('vault_yield_rxc');
    expect(await getBuild(pool, VIEWS, 'vault_yield_rxc')).toMatchObject({
      purpose: 'reindex',
      state: 'live',
      topic: newTopic,
      indexerSchema: namespace,
    });
    const a = await schemaChecksums(pool, db.schema);
    const b = await schemaChecksums(pool, 'vault_yield_rxc');
    expect(b.ledger!.rows).toBeGreaterThan(0);
    expect(b).toEqual(a);
    const { rows } = await pool.query<{ chain_id: number; n: string }>(
      'select chain_id, count(*) as n from vault_yield_rxc.vault_snapshot group by chain_id order by chain_id',
    );
    expect(rows.map((r) => [r.chain_id, Number(r.n)])).toEqual([
      [A, 1],
      [B, 2],
    ]);
  }, 200_000);

  it('FOLLOW_LIVE indexers of both chains move to the new log and resume each chain from its own checkpoint there', async () => {
    const blocksUpTo = async (cut: Map<number, number>) =>
      (await readTopic(kafkaBrokers(), newTopic)).filter(
        (r) => r.record.blockNumber <= cut.get(r.record.chainId)!,
      ).length;
    const before = await blocksUpTo(liveCheckpoints);
    for (const [a, stack, id] of [
      [anvilA, stackA, A],
      [anvilB, stackB, B],
    ] as const)
      followers.push(
        followLiveIndexer(configOf(a.rpcUrl, stack.factory, id), { viewsSchema: VIEWS, intervalMs: 200 }),
      );
    await step('followers start', Promise.all(followers.map((f) => f.start())), 60_000);
    expect(followers.map((f) => [f.topic(), f.schema()])).toEqual([
      [newTopic, namespace],
      [newTopic, namespace],
    ]);
    // A block mined on B after the switch goes to the new log, from B's checkpoint in the namespace.
    await accrue(stackB, vaultB, 444n);
    const headB = Number(await devChain(anvilB.rpcUrl).blockNumber());
    expect(headB).toBeGreaterThan(liveCheckpoints.get(B)!);
    await step('B follower reaches the new head', followers[1]!.waitFor(headB), 60_000);
    const cps = new Map((await indexerCheckpoints(pool, namespace)).map((c) => [c.chainId, c.blockNumber]));
    expect(cps.get(A)).toBe(liveCheckpoints.get(A));
    expect(cps.get(B)).toBe(headB);
    const published = await readTopic(kafkaBrokers(), newTopic);
    expect(published.some((r) => r.record.chainId === B && r.record.blockNumber === headB)).toBe(true);
    // Neither chain republished its history into the new log (no start from its start block).
    expect(await blocksUpTo(liveCheckpoints)).toBe(before);
  }, 200_000);
});
