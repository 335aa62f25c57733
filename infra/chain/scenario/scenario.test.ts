import { vaultAbi } from '@vault-yield/contracts';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnvilInstance, startAnvil } from '../anvil.js';
import { playBulk } from './bulk.js';
import { playDemoScenario } from './demo.js';
import { deployReferenceStack, type ReferenceStack } from './deploy.js';

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

  it('deploys the stack with v3 token order and feeds registered', () => {
    expect(stack.token0.address < stack.token1.address).toBe(true);
    expect(stack.pools.map((p) => p.fee)).toEqual([500, 3000, 400]);
    expect(stack.deploymentBlock).toBeGreaterThan(0n);
  });

  it('the demo emits every event of the vocabulary', async () => {
    const r = await playDemoScenario(stack);
    for (const name of ALL_EVENTS) expect(r.eventCounts[name] ?? 0, name).toBeGreaterThan(0);
    expect(r.priceMoves).toHaveLength(2);
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
    expect(await sim(a!.owner, a!.address, 'openPosition', [0, 10, 1n, 0n, 0n])).toBe('NotAgent');
    expect(await sim(agent, a!.address, 'withdraw', [weth, 1n])).toBe('NotOwner');
    expect(await sim(a!.owner, a!.address, 'withdraw', [weth, 10n ** 30n])).toBe('InsufficientIdle');
    expect(await sim(agent, a!.address, 'collectFees', [99n, 1n, 1n])).toBe('UnknownPosition');
    expect(await sim(agent, a!.address, 'claimRewards', [10n ** 30n])).toBe('InsufficientPending');
    expect(await sim(agent, a!.address, 'chargePerformanceFee', [weth, 1n, treasury])).toBe(
      'NotFeeCollector',
    );
    expect(await sim(a!.owner, a!.address, 'suspend', ['x'])).toBe('NotGuardian');
    expect(await sim(guardian, b!.address, 'suspend', [''])).toBe('BadReason');
    expect(await sim(agent, a!.address, 'completeExit', [])).toBe('NoExitRequested');
  }, 60_000);

  it('bulk mode emits exactly the planned number of vault events, none reverted', async () => {
    const r = await playBulk(stack, { vaults: 5, eventsPerVault: 40, txsPerBlock: 60 });
    expect(r.plannedEvents).toBe(200);
    expect(r.events).toBe(200);
    expect(r.missingEvents).toBe(0);
    expect(r.toBlock - r.fromBlock).toBeGreaterThan(2n);
  }, 120_000);
});
