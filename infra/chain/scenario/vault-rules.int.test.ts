import {
  rewardsGaugeAbi,
  swapperAbi,
  testTokenAbi,
  uniswapV3PoolAbi,
  vaultAbi,
  vaultFactoryAbi,
} from '@vault-yield/contracts';
import { type Address, decodeEventLog, encodePacked, keccak256, type TransactionReceipt } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnvilInstance, startAnvil } from '../anvil.js';
import { deployReferenceStack, type ReferenceStack } from './deploy.js';
import { churn, readSlot0 } from './prices.js';
import { createVault, fundOwner, type TrackedVault } from './vault-ops.js';
import { write } from './wallet.js';

/** The Vault's rules on a real Uniswap v3 pool, each with the behaviour that breaks if it goes. */
describe('Vault on a real Uniswap v3 pool', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let v: TrackedVault;
  let lo: number;
  let hi: number;
  const L = 10n ** 15n;

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    v = await createVault(stack, stack.accounts.owners[0]!, stack.pools[0]!, 'rules');
    await fundOwner(stack, v, 1_000n, 3_000_000n);
    const { weth, usdc } = stack.tokens;
    await write(stack.clients, v.owner, v.address, vaultAbi, 'deposit', [weth.address, 100n * 10n ** 18n]);
    await write(stack.clients, v.owner, v.address, vaultAbi, 'deposit', [usdc.address, 300_000n * 10n ** 6n]);
    const { tick } = await readSlot0(stack, v.pool.address);
    lo = Math.floor(tick / 10) * 10 - 100;
    hi = lo + 210;
  });
  afterAll(async () => {
    await anvil?.stop();
  });

  const agent = () => stack.accounts.agent;
  const sim = (
    from: Address,
    address: Address,
    abi: readonly unknown[],
    functionName: string,
    args: unknown[],
  ) =>
    stack.clients.publicClient
      .simulateContract({ address, abi, functionName, args, account: from } as never)
      .then(
        () => 'ok',
        (e: Error & { cause?: { data?: { errorName?: string } } }) => e.cause?.data?.errorName ?? e.message,
      );
  const events = (r: TransactionReceipt) =>
    r.logs.flatMap((log) => {
      if (log.address.toLowerCase() !== v.address) return [];
      try {
        return [decodeEventLog({ abi: vaultAbi, data: log.data, topics: log.topics })];
      } catch {
        return [];
      }
    });
  const poolPosition = async (tickLower: number, tickUpper: number) => {
    const key = keccak256(encodePacked(['address', 'int24', 'int24'], [v.address, tickLower, tickUpper]));
    const p = await stack.clients.publicClient.readContract({
      address: v.pool.address,
      abi: uniswapV3PoolAbi,
      functionName: 'positions',
      args: [key],
    });
    return { liquidity: p[0], owed0: p[3], owed1: p[4] };
  };
  const live = async () =>
    (
      await stack.clients.publicClient.readContract({
        address: v.address,
        abi: vaultAbi,
        functionName: 'livePositions',
      })
    )[0];

  it('openPosition mints in the pool as the vault and emits what the pool took', async () => {
    const r = await write(stack.clients, agent(), v.address, vaultAbi, 'openPosition', [lo, hi, L]);
    const [e] = events(r);
    expect(e?.eventName).toBe('PositionOpened');
    const pool = await poolPosition(lo, hi);
    expect(pool.liquidity).toBe(L);
    if (e?.eventName !== 'PositionOpened') throw new Error('no PositionOpened');
    expect(e.args.amount0).toBeGreaterThan(0n);
    expect(e.args.amount1).toBeGreaterThan(0n);
    expect(await live()).toEqual([1n]);
  });

  it('RangeInUse: no two live positions share a range', async () => {
    expect(await sim(agent(), v.address, vaultAbi, 'openPosition', [lo, hi, L])).toBe('RangeInUse');
    await write(stack.clients, agent(), v.address, vaultAbi, 'openPosition', [lo - 50, hi + 50, L]);
    expect(await sim(agent(), v.address, vaultAbi, 'rebalancePosition', [2n, lo, hi, L])).toBe('RangeInUse');
    // Rebalancing into its own range is allowed.
    expect(await sim(agent(), v.address, vaultAbi, 'rebalancePosition', [1n, lo, hi, L])).toBe('ok');
  });

  it('resize down returns exactly the burned principal; fees stay owed in the pool', async () => {
    await churn(stack, v.pool, 300);
    const r = await write(stack.clients, agent(), v.address, vaultAbi, 'resizePosition', [1n, L / 2n]);
    const [e] = events(r);
    if (e?.eventName !== 'PositionResized') throw new Error('no PositionResized');
    expect(e.args.amount0Delta).toBeLessThan(0n);
    const pool = await poolPosition(lo, hi);
    expect(pool.liquidity).toBe(L / 2n);
    expect(pool.owed0 + pool.owed1).toBeGreaterThan(0n); // the fees, nothing else
    const up = events(await write(stack.clients, agent(), v.address, vaultAbi, 'resizePosition', [1n, L]))[0];
    if (up?.eventName !== 'PositionResized') throw new Error('no PositionResized');
    expect(up.args.amount0Delta).toBeGreaterThan(0n);
  });

  it('rebalance collects principal + fees, emits the fee part as FeesCollected first', async () => {
    const r = await write(stack.clients, agent(), v.address, vaultAbi, 'rebalancePosition', [
      1n,
      lo - 10,
      hi,
      L,
    ]);
    const names = events(r).map((e) => e.eventName);
    expect(names).toEqual(['FeesCollected', 'PositionRebalanced']);
    expect(await poolPosition(lo, hi)).toEqual({ liquidity: 0n, owed0: 0n, owed1: 0n });
    lo -= 10;
  });

  it('close leaves fees owed and the position live; collectFees on it retires it', async () => {
    await churn(stack, v.pool, -300);
    await write(stack.clients, agent(), v.address, vaultAbi, 'closePosition', [2n]);
    const owed = await poolPosition(lo - 40, hi + 50);
    expect(owed.liquidity).toBe(0n);
    expect(owed.owed0 + owed.owed1).toBeGreaterThan(0n);
    expect(await live()).toEqual([1n, 2n]);
    expect(await sim(agent(), v.address, vaultAbi, 'closePosition', [2n])).toBe('PositionClosedAlready');
    const [e] = events(await write(stack.clients, agent(), v.address, vaultAbi, 'collectFees', [2n]));
    if (e?.eventName !== 'FeesCollected') throw new Error('no FeesCollected');
    expect(e.args.amount0).toBe(owed.owed0);
    expect(e.args.amount1).toBe(owed.owed1);
    expect(await live()).toEqual([1n]);
    expect(await sim(agent(), v.address, vaultAbi, 'collectFees', [2n])).toBe('PositionClosedAlready');
  });

  it('mints are paid from idle only (InsufficientIdle), and only the pool may call back', async () => {
    expect(await sim(agent(), v.address, vaultAbi, 'openPosition', [lo - 1000, hi + 1000, 10n ** 24n])).toBe(
      'InsufficientIdle',
    );
    expect(await sim(agent(), v.address, vaultAbi, 'uniswapV3MintCallback', [1n, 1n, '0x'])).toBe('NotPool');
  });

  it('tokens sent by a plain transfer are withdrawable', async () => {
    const { usdc } = stack.tokens;
    await write(stack.clients, stack.accounts.deployer, usdc.address, testTokenAbi, 'mint', [
      stack.accounts.deployer,
      5n,
    ]);
    await write(stack.clients, stack.accounts.deployer, usdc.address, testTokenAbi, 'transfer', [
      v.address,
      5n,
    ]);
    const bal = await stack.clients.publicClient.readContract({
      address: usdc.address,
      abi: testTokenAbi,
      functionName: 'balanceOf',
      args: [v.address],
    });
    expect(await sim(v.owner, v.address, vaultAbi, 'withdraw', [usdc.address, bal])).toBe('ok');
  });

  it('claims are paid by the gauge, which pays vaults only', async () => {
    await write(stack.clients, agent(), v.address, vaultAbi, 'accrueRewards', [7n]);
    const r = await write(stack.clients, agent(), v.address, vaultAbi, 'claimRewards', [7n]);
    const paid = r.logs.find((l) => l.address.toLowerCase() === stack.gauge);
    expect(paid).toBeDefined();
    const rwd = stack.tokens.rwd.address;
    expect(await sim(stack.accounts.deployer, stack.gauge, rewardsGaugeAbi, 'pay', [rwd, 1n])).toBe(
      'NotVault',
    );
  });

  it('the factory requires a registered venue; only the admin registers one', async () => {
    const { weth, usdc, rwd } = stack.tokens;
    const args = [
      v.owner,
      agent(),
      `0x${'11'.repeat(32)}`,
      weth.address,
      usdc.address,
      stack.swapper,
      rwd.address,
    ];
    expect(await sim(v.owner, stack.factory, vaultFactoryAbi, 'createVault', args)).toBe('UnknownVenue');
    expect(await sim(v.owner, stack.factory, vaultFactoryAbi, 'setVenue', [stack.swapper, 'x'])).toBe(
      'NotAdmin',
    );
  });

  it('the swapper accepts callbacks only from the pool it is calling', async () => {
    expect(await sim(agent(), stack.swapper, swapperAbi, 'uniswapV3SwapCallback', [1n, 0n, '0x'])).toBe(
      'NotActivePool',
    );
    const target = (await readSlot0(stack, v.pool.address)).sqrtPriceX96 + 10n ** 20n;
    await write(stack.clients, stack.accounts.deployer, stack.swapper, swapperAbi, 'swapToPrice', [
      v.pool.address,
      target,
    ]);
    expect((await readSlot0(stack, v.pool.address)).sqrtPriceX96).toBe(target);
  });
});
