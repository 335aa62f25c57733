import { mockAggregatorAbi, vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  createVault,
  deployReferenceStack,
  devChain,
  fundOwner,
  movePrice,
  type ReferenceStack,
  startAnvil,
  type TrackedVault,
  write,
} from '@vault-yield/devstack/chain';
import type { SnapshotView } from '@vault-yield/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli/run.js';
import { type ChainPipeline, startChainPipeline } from './pipeline.js';

/**
 * A feed left past its heartbeat is never used silently: the snapshot names it (feed, age,
 * heartbeat), the projector counts records valued with it, `vault-yield status` lists it — from
 * the first block it is stale in, even when nothing else happens on chain.
 */
describe('stale prices', () => {
  const HEARTBEAT = 3600;
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let p: ChainPipeline;
  let vault: TrackedVault;

  const snapshot = async () => (await p.api.get(`/v1/vault/${vault.address}/snapshot`)).body as SnapshotView;
  const settle = () => p.settle();

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    vault = await createVault(stack, stack.accounts.owners[0]!, stack.pools[0]!, 'stale');
    await fundOwner(stack, vault, 10n, 10_000n);
    for (const t of [vault.pool.token0, vault.pool.token1])
      await write(stack.clients, vault.owner, vault.address, vaultAbi, 'deposit', [
        t.address,
        10n ** BigInt(t.decimals),
      ]);
    p = await startChainPipeline(anvil, stack, 'stale', { heartbeats: { default: HEARTBEAT } });
    await settle();
  }, 180_000);

  afterAll(async () => {
    await p?.stop();
    await anvil?.stop();
  });

  it('fresh feeds: nothing is flagged', async () => {
    expect((await snapshot()).stalePrices).toEqual([]);
  });

  it('a feed past its heartbeat is named in the snapshot, counted and listed by status, with no other activity', async () => {
    const dev = devChain(anvil.rpcUrl);
    await dev.increaseTime(HEARTBEAT + 400);
    await dev.mine(1); // an empty block: only time moved
    await settle();
    const snap = await snapshot();
    const weth = stack.tokens.weth;
    const usdc = stack.tokens.usdc;
    const flagged = new Map(snap.stalePrices.map((p) => [p.token, p]));
    expect([...flagged.keys()].sort()).toEqual(
      [weth.address, usdc.address].map((a) => a.toLowerCase()).sort(),
    );
    const w = flagged.get(weth.address.toLowerCase())!;
    expect(w.feed).toBe(weth.feed.toLowerCase());
    expect(w.symbol).toBe('WETH');
    expect(w.heartbeatSeconds).toBe(HEARTBEAT);
    expect(w.ageSeconds).toBeGreaterThan(HEARTBEAT);
    expect(w.ageSeconds).toBe(Math.floor(snap.updatedAt / 1000) - w.priceUpdatedAt / 1000);
    // still valued, with the last price: stale is a flag, not a refusal
    expect(snap.valueUsd).toBeGreaterThan(0);

    const metrics = await p.projector.metrics.registry.getSingleMetricAsString(
      'projector_stale_price_records_total',
    );
    expect(metrics).toContain(`feed="${weth.feed.toLowerCase()}"`);

    const status = await runCli(['status'], cliEnv(p.db, { topic: p.topic, views: `${p.db.schema}_views` }));
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/stale prices\s+2/);
    // Vaults are named by their id: the chain and the address (#45).
    expect(status.stdout).toContain(`vault eip155:${anvil.chainId}:${vault.address.toLowerCase()} WETH`);
    const json = JSON.parse(
      (await runCli(['status', '--json'], cliEnv(p.db, { topic: p.topic, views: `${p.db.schema}_views` })))
        .stdout,
    );
    expect(json.stalePrices.map((p: { symbol: string }) => p.symbol).sort()).toEqual(['USDC', 'WETH']);
  });

  it('a fresh answer clears the flag of that feed only (at the next mark the cadence allows)', async () => {
    await movePrice(stack, stack.tokens.weth, stack.tokens.weth.usd * 1.01);
    // the vault was marked at the stale block: the default cadence (10 blocks) lets the next mark out after it
    await devChain(anvil.rpcUrl).mine(11);
    await settle();
    const snap = await snapshot();
    expect(snap.stalePrices.map((p) => p.symbol)).toEqual(['USDC']);
  });

  it('a feed answering 0 is no price: the last valid one values the vault, flagged invalid, until a price returns', async () => {
    const weth = stack.tokens.weth;
    const before = await snapshot();
    const last = before.stalePrices.length; // USDC still stale from the test above
    expect(last).toBe(1);
    await write(stack.clients, stack.accounts.deployer, weth.feed, mockAggregatorAbi, 'updateAnswer', [0n]);
    await devChain(anvil.rpcUrl).mine(11);
    await settle();
    const broken = await snapshot();
    const flag = broken.stalePrices.find((p) => p.symbol === 'WETH');
    expect(flag?.reason).toBe('invalid');
    // Valued at the last valid price, never at 0: no loss appears, and none is undone later.
    expect(broken.valueUsd).toBeCloseTo(before.valueUsd, 6);
    expect(broken.blockNumber).toBeGreaterThan(before.blockNumber);
    // A negative answer is no price either (the indexer used to stop on it).
    await write(stack.clients, stack.accounts.deployer, weth.feed, mockAggregatorAbi, 'updateAnswer', [-5n]);
    await devChain(anvil.rpcUrl).mine(11);
    await settle();
    const negative = await snapshot();
    expect(negative.blockNumber).toBeGreaterThan(broken.blockNumber);
    expect(negative.stalePrices.find((p) => p.symbol === 'WETH')?.reason).toBe('invalid');
    expect(negative.valueUsd).toBeCloseTo(before.valueUsd, 6);
    await movePrice(stack, weth, weth.usd * 1.01);
    await devChain(anvil.rpcUrl).mine(11);
    await settle();
    const back = await snapshot();
    expect(back.stalePrices.map((p) => p.symbol)).toEqual(['USDC']);
    expect(back.stalePrices[0]?.reason).toBe('stale');
  });
});
