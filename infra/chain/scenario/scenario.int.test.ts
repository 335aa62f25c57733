import {
  uniswapV3FactoryAbi,
  uniswapV3FactoryBytecode,
  uniswapV3PoolAbi,
  vaultAbi,
  vaultFactoryAbi,
} from '@vault-yield/contracts';
import { type Abi, type Address, parseEventLogs } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnvilInstance, startAnvil } from '../anvil.js';
import { playBulk } from './bulk.js';
import { playDemoScenario } from './demo.js';
import { deployReferenceStack, type ReferenceStack } from './deploy.js';
import { createVault, setDefaultFeeRate } from './vault-ops.js';
import { write } from './wallet.js';

const ALL_EVENTS = [
  'VaultCreated',
  'Deposited',
  'Withdrawn',
  'PositionOpened',
  'PositionResized',
  'PositionRebalanced',
  'PositionClosed',
  'FeesCollected',
  'RewardsAccrued',
  'RewardsClaimed',
  'PerformanceFeeCharged',
  'Suspended',
  'Resumed',
  'ExitRequested',
  'ExitCompleted',
  'StrategySelected',
  'PerformanceFeeSet',
  'Swapped',
];

describe('scenario driver', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
  }, 60_000);
  afterAll(async () => {
    await anvil?.stop();
  });

  it('deploys real v3 pools from the published factory: both token orders, two fee tiers', async () => {
    const read = <T>(address: Address, functionName: string, args: unknown[] = []) =>
      stack.clients.publicClient.readContract({
        address,
        abi: [...uniswapV3PoolAbi, ...uniswapV3FactoryAbi, ...vaultFactoryAbi],
        functionName,
        args,
      } as never) as Promise<T>;
    expect(stack.pools.map((p) => [p.token0.symbol, p.token1.symbol, p.fee, p.tickSpacing])).toEqual([
      ['WETH', 'USDC', 500, 10],
      ['WETH', 'USDC', 3000, 60],
      ['USDC', 'ARB', 3000, 60],
    ]);
    for (const p of stack.pools) {
      expect(p.token0.address < p.token1.address).toBe(true);
      expect((await read<Address>(p.address, 'factory')).toLowerCase()).toBe(stack.uniswapFactory);
      expect((await read<Address>(p.address, 'token0')).toLowerCase()).toBe(p.token0.address);
      expect(
        (
          await read<Address>(stack.uniswapFactory, 'getPool', [p.token0.address, p.token1.address, p.fee])
        ).toLowerCase(),
      ).toBe(p.address);
      expect(await read<string>(stack.factory, 'venueOf', [p.address])).toBe('uniswap-v3');
      expect(await read<bigint>(p.address, 'liquidity')).toBeGreaterThan(0n);
      // Initialized at the feeds' price: within one tick of it.
      const [sqrtP] = await read<[bigint]>(p.address, 'slot0');
      const raw = (Number(sqrtP) / 2 ** 96) ** 2 * 10 ** (p.token0.decimals - p.token1.decimals);
      expect(Math.abs(raw / (p.token0.usd / p.token1.usd) - 1)).toBeLessThan(1e-4);
    }
    const code = await stack.clients.publicClient.getCode({ address: stack.uniswapFactory });
    expect(uniswapV3FactoryBytecode.endsWith(code!.slice(2, 200))).toBe(false); // creation ≠ runtime
    expect(uniswapV3FactoryBytecode).toContain(code!.slice(2, 2000));
    expect(stack.deploymentBlock).toBeGreaterThan(0n);
  });

  it('the demo emits every event of the vocabulary', async () => {
    const r = await playDemoScenario(stack);
    for (const name of ALL_EVENTS) expect(r.eventCounts[name] ?? 0, name).toBeGreaterThan(0);
    expect(r.priceMoves.map((m) => m.token)).toEqual(['WETH', 'ARB', 'WETH', 'ARB']);
  }, 60_000);

  it('vaults revert on misuse with named errors', async () => {
    const r = await playDemoScenario(stack);
    const [a, b] = r.vaults;
    const sim = (from: Address, vault: Address, functionName: string, args: unknown[]) =>
      stack.clients.publicClient
        .simulateContract({ address: vault, abi: vaultAbi, functionName, args, account: from } as never)
        .then(
          () => 'ok',
          (e: Error & { cause?: { data?: { errorName?: string } } }) => e.cause?.data?.errorName ?? e.message,
        );
    const { agent, guardian, treasury } = stack.accounts;
    const weth = stack.tokens.weth.address;
    expect(await sim(a!.owner, a!.address, 'openPosition', [0, 10, 1n])).toBe('NotAgent');
    expect(await sim(agent, a!.address, 'withdraw', [weth, 1n])).toBe('NotOwner');
    expect(await sim(a!.owner, a!.address, 'withdraw', [weth, 10n ** 30n])).toBe('InsufficientIdle');
    expect(await sim(agent, a!.address, 'collectFees', [99n])).toBe('UnknownPosition');
    expect(await sim(agent, a!.address, 'claimRewards', [10n ** 30n])).toBe('InsufficientPending');
    expect(await sim(agent, a!.address, 'chargePerformanceFee', [weth, 1n, treasury])).toBe(
      'NotFeeCollector',
    );
    expect(await sim(a!.owner, a!.address, 'suspend', ['x'])).toBe('NotGuardian');
    expect(await sim(guardian, b!.address, 'suspend', [''])).toBe('BadReason');
    expect(await sim(agent, a!.address, 'completeExit', [])).toBe('NoExitRequested');
  }, 60_000);

  it('a vault starts at the factory default fee rate, then the fee collector sets its own; both capped at 100 %', async () => {
    const { deployer, agent, feeCollector, owners } = stack.accounts;
    const pc = stack.clients.publicClient;
    const sim = (from: Address, address: Address, abi: Abi, functionName: string, args: unknown[]) =>
      pc.simulateContract({ address, abi, functionName, args, account: from } as never).then(
        () => 'ok',
        (e: Error & { cause?: { data?: { errorName?: string } } }) => e.cause?.data?.errorName ?? e.message,
      );
    const rateOf = (vault: Address) =>
      pc.readContract({ address: vault, abi: vaultAbi, functionName: 'performanceFeeBps' });
    const createdRate = async (vault: Address) => {
      const [e] = await pc.getContractEvents({
        address: stack.factory,
        abi: vaultFactoryAbi,
        eventName: 'VaultCreated',
        args: { vault },
        fromBlock: stack.deploymentBlock,
      });
      return e!.args.performanceFeeBps;
    };
    expect(
      await pc.readContract({
        address: stack.factory,
        abi: vaultFactoryAbi,
        functionName: 'defaultPerformanceFeeBps',
      }),
    ).toBe(2000);
    const before = await createVault(stack, owners[0]!, stack.pools[0]!, 'rate-before');
    expect(await rateOf(before.address)).toBe(2000);
    expect(await createdRate(before.address)).toBe(2000);

    const factoryAbi = vaultFactoryAbi as Abi;
    expect(await sim(feeCollector, stack.factory, factoryAbi, 'setDefaultPerformanceFee', [1000])).toBe(
      'NotAdmin',
    );
    expect(await sim(deployer, stack.factory, factoryAbi, 'setDefaultPerformanceFee', [10_001])).toBe(
      'FeeTooHigh',
    );
    const set = await setDefaultFeeRate(stack, 1000);
    expect(
      parseEventLogs({ abi: vaultFactoryAbi, logs: set.logs, eventName: 'DefaultPerformanceFeeSet' })[0]
        ?.args,
    ).toEqual({ performanceFeeBps: 1000 });
    try {
      const after = await createVault(stack, owners[0]!, stack.pools[0]!, 'rate-after');
      expect(await rateOf(after.address)).toBe(1000);
      expect(await createdRate(after.address)).toBe(1000);
      expect(await rateOf(before.address)).toBe(2000); // a vault's rate is its own once created

      const vault = vaultAbi as Abi;
      expect(await sim(agent, after.address, vault, 'setPerformanceFee', [500])).toBe('NotFeeCollector');
      expect(await sim(deployer, after.address, vault, 'setPerformanceFee', [500])).toBe('NotFeeCollector');
      expect(await sim(feeCollector, after.address, vault, 'setPerformanceFee', [10_001])).toBe('FeeTooHigh');
      const r = await write(
        stack.clients,
        feeCollector,
        after.address,
        vaultAbi,
        'setPerformanceFee',
        [10_000],
      );
      expect(
        parseEventLogs({ abi: vaultAbi, logs: r.logs, eventName: 'PerformanceFeeSet' })[0]?.args,
      ).toEqual({
        performanceFeeBps: 10_000,
      });
      expect(await rateOf(after.address)).toBe(10_000);
    } finally {
      await setDefaultFeeRate(stack, 2000);
    }
  }, 60_000);

  it('bulk mode emits exactly the planned number of vault events, none reverted', async () => {
    // More vaults than owners: blocks order the owners' createVault txs by sender, not as sent.
    const r = await playBulk(stack, { vaults: 200, eventsPerVault: 6, txsPerBlock: 300 });
    expect(r.plannedEvents).toBe(1200);
    expect(r.events).toBe(1200);
    expect(r.missingEvents).toBe(0);
    expect(r.toBlock - r.fromBlock).toBeGreaterThan(2n);
  }, 120_000);
});
