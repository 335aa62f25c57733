import { testTokenAbi, vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  close,
  createVault,
  deployReferenceStack,
  devChain,
  fundOwner,
  giftPosition,
  openAround,
  type ReferenceStack,
  receiptOf,
  send,
  startAnvil,
  type TrackedVault,
  write,
} from '@vault-yield/devstack/chain';
import type { SnapshotView } from '@vault-yield/domain';
import { createPgPool, type Pool } from '@vault-yield/store';
import type { Address, Hash } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChainPipeline, startChainPipeline } from './pipeline.js';

/**
 * Figures over time on a real chain, through indexer → Kafka → projector → Postgres → reader:
 * a fee charged in the block of a withdrawal is a return over the value just before it (not over
 * the block's start), and a vault whose exit completed with rewards still unclaimed reads
 * `exiting` until nothing is left to hand back — never `aiming`; liquidity minted for a vault by
 * someone else is the vault's: valued as the chain holds it, shown, and booked as capital in.
 */
describe('truth over time on anvil', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let p: ChainPipeline;
  let pool: Pool;
  let v: TrackedVault;

  const snapshot = async () => (await p.api.get(`/v1/vault/${v.address}/snapshot`)).body as SnapshotView;
  const usdc = () => (v.pool.token0.symbol === 'USDC' ? v.pool.token0 : v.pool.token1);

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    v = await createVault(stack, stack.accounts.owners[0]!, stack.pools[0]!, 'over-time');
    await fundOwner(stack, v, 10n, 100_000n);
    await write(stack.clients, v.owner, v.address, vaultAbi, 'deposit', [
      usdc().address,
      20_000n * 10n ** 6n,
    ]);
    p = await startChainPipeline(anvil, stack, 'over_time', {
      mark: { intervalBlocks: 0, minIntervalMs: 0 },
    });
    await p.settle();
    pool = createPgPool({ url: p.db.writerUrl, schema: p.db.schema, applicationName: 'over-time', max: 2 });
  }, 180_000);

  afterAll(async () => {
    await pool?.end();
    await p?.stop();
    await anvil?.stop();
  });

  it('a fee charged in a withdrawal’s block counts over the value just before it', async () => {
    const before = await snapshot();
    const t = usdc().address;
    const dev = devChain(anvil.rpcUrl);
    await dev.setAutomine(false);
    let hashes: Hash[];
    try {
      // Withdraw 15,000 of 20,000 USDC, then a fee of 100 USDC, both in one block.
      const w = await send(stack.clients, v.owner, v.address, vaultAbi, 'withdraw', [t, 15_000n * 10n ** 6n]);
      const f = await send(
        stack.clients,
        stack.accounts.feeCollector,
        v.address,
        vaultAbi,
        'chargePerformanceFee',
        [t, 100n * 10n ** 6n, stack.accounts.treasury],
      );
      hashes = [w, f];
      await dev.mineOne();
    } finally {
      await dev.setAutomine(true);
    }
    const receipts = await Promise.all(hashes.map((h) => receiptOf(stack.clients, h)));
    expect(receipts[0]!.blockNumber).toBe(receipts[1]!.blockNumber);
    expect(receipts[0]!.transactionIndex).toBeLessThan(receipts[1]!.transactionIndex);
    await p.settle();
    const after = await snapshot();
    expect(after.capitalOutUsd - before.capitalOutUsd).toBeCloseTo(15_000, 4);
    expect(after.fees.taxedUsd - before.fees.taxedUsd).toBeCloseTo(100, 4);
    expect(after.valueUsd).toBeCloseTo(before.valueUsd - 15_100, 4);
    const { rows } = await pool.query<{ block: string; x: number }>(
      `select block_number::text as block, return_index::float8 as x from equity_points
        where vault = decode($1, 'hex') order by seq desc limit 2`,
      [v.address.slice(2).toLowerCase()],
    );
    expect(rows[0]!.block).toBe(String(receipts[0]!.blockNumber));
    // 100 of the 5,000 left just before the fee: 0.98 (over the block's start, 20,000: 0.995).
    expect(rows[0]!.x / rows[1]!.x).toBeCloseTo(0.98, 6);
  });

  it('an exit completed with rewards unclaimed reads exiting, then idle once they are handed back', async () => {
    const other = v.pool.token0.symbol === 'USDC' ? v.pool.token1 : v.pool.token0;
    await write(stack.clients, v.owner, v.address, vaultAbi, 'deposit', [
      other.address,
      10n ** BigInt(other.decimals),
    ]);
    const position = await openAround(stack, v, 600, 50n);
    await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'accrueRewards', [10n ** 19n]);
    await write(stack.clients, v.owner, v.address, vaultAbi, 'requestExit', []);
    await close(stack, v, position);
    await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'completeExit', []);
    await p.settle();
    const done = await snapshot();
    expect(done.positions).toEqual([]);
    expect(done.pendingRewardsUsd).toBeGreaterThan(0.01);
    expect(done.status).toBe('exiting'); // read `aiming` before fold version 3
    await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'claimRewards', [10n ** 19n]);
    await p.settle();
    expect((await snapshot()).status).toBe('exiting'); // the rewards are a balance now
    const reward = (await stack.clients.publicClient.readContract({
      address: v.address,
      abi: vaultAbi,
      functionName: 'rewardToken',
    })) as Address;
    const held = await stack.clients.publicClient.readContract({
      address: reward,
      abi: testTokenAbi,
      functionName: 'balanceOf',
      args: [v.address],
    });
    await write(stack.clients, v.owner, v.address, vaultAbi, 'withdraw', [reward, held]);
    await p.settle();
    const empty = await snapshot();
    expect(empty.valueUsd).toBeLessThan(0.01);
    expect(empty.status).toBe('idle');
  });

  it('liquidity minted for a vault by someone else is valued, shown in positions, and booked as capital in', async () => {
    const g = await createVault(stack, stack.accounts.owners[1]!, stack.pools[0]!, 'gifted');
    await fundOwner(stack, g, 10n, 100_000n);
    const t = g.pool.token0.symbol === 'USDC' ? g.pool.token0 : g.pool.token1;
    const weth = g.pool.token0.symbol === 'USDC' ? g.pool.token1 : g.pool.token0;
    await write(stack.clients, g.owner, g.address, vaultAbi, 'deposit', [t.address, 5_000n * 10n ** 6n]);
    await write(stack.clients, g.owner, g.address, vaultAbi, 'deposit', [weth.address, 10n ** 18n]);
    const id = await openAround(stack, g, 600, 50n);
    await p.settle();
    const snap = async () => (await p.api.get(`/v1/vault/${g.address}/snapshot`)).body as SnapshotView;
    const before = await snap();
    // one gift of its own range (a position the vault never opened), one into its open range
    const own = await giftPosition(stack, g, 5_000, { halfWidth: 1200 });
    const live = g.positions.get(id)!;
    await giftPosition(stack, g, 2_000, { tickLower: live.tickLower, tickUpper: live.tickUpper });
    await p.settle();
    const after = await snap();
    // the chain's own valuation of every position the pool holds for the vault agrees
    const truth = await p.truth(g.address);
    expect(Math.abs(after.valueUsd - Number(truth.valueUsd))).toBeLessThan(1e-6);
    expect(after.valueUsd - before.valueUsd).toBeGreaterThan(5_000);
    // what the gifts cost is capital in (the pool's amounts at the block's prices): no gain
    expect(after.capitalInUsd - before.capitalInUsd).toBeCloseTo(after.valueUsd - before.valueUsd, 2);
    expect(after.netUsd - before.netUsd).toBeCloseTo(0, 2);
    expect(after.positions).toHaveLength(2);
    expect(after.positions.map((x) => x.id)).toContain(String(id));
    const rows = (await p.api.get(`/v1/vault/${g.address}/events?type=position.received`)).body as {
      data: { tickLower: number; tickUpper: number; from: string };
      amounts: { symbol: string; valueUsd: number }[] | null;
    }[];
    expect(rows.map((r) => [r.data.tickLower, r.data.tickUpper]).sort()).toEqual(
      [
        [own.tickLower, own.tickUpper],
        [live.tickLower, live.tickUpper],
      ].sort(),
    );
    expect(rows.every((r) => r.data.from === stack.swapper.toLowerCase())).toBe(true);
    // each row reads in tokens and USD at its block: what the gifts cost is the capital they added
    const amounts = rows.flatMap((r) => r.amounts ?? []);
    expect(new Set(amounts.map((a) => a.symbol))).toEqual(new Set(['WETH', 'USDC']));
    expect(amounts.reduce((s, a) => s + a.valueUsd, 0)).toBeCloseTo(
      after.capitalInUsd - before.capitalInUsd,
      2,
    );
    // the vault closes and collects its own position: the gift in that range stays the vault's
    await close(stack, g, id);
    await write(stack.clients, stack.accounts.agent, g.address, vaultAbi, 'collectFees', [id]);
    await p.settle();
    const closed = await snap();
    expect(Math.abs(closed.valueUsd - Number((await p.truth(g.address)).valueUsd))).toBeLessThan(1e-6);
    expect(closed.positions).toHaveLength(2);
    expect(closed.positions.map((x) => x.id)).not.toContain(String(id));
  });
});
