import { testTokenAbi, vaultAbi } from '@vault-yield/contracts';
import type { SnapshotView } from '@vault-yield/domain';
import { createPgPool, type Pool } from '@vault-yield/store';
import type { Address, Hash } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AnvilInstance,
  deployReferenceStack,
  devChain,
  type ReferenceStack,
  startAnvil,
} from '../../infra/chain/index.js';
import {
  close,
  createVault,
  fundOwner,
  openAround,
  type TrackedVault,
} from '../../infra/chain/scenario/vault-ops.js';
import { receiptOf, send, write } from '../../infra/chain/scenario/wallet.js';
import { type ChainPipeline, startChainPipeline } from './pipeline.js';

/**
 * Figures over time on a real chain, through indexer → Kafka → projector → Postgres → reader:
 * a fee charged in the block of a withdrawal is a return over the value just before it (not over
 * the block's start), and a vault whose exit completed with rewards still unclaimed reads
 * `exiting` until nothing is left to hand back — never `aiming`.
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
});
