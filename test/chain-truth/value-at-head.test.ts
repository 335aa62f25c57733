import { uniswapV3PoolAbi, vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  churn,
  close,
  collectFees,
  createVault,
  deployReferenceStack,
  fundOwner,
  openAround,
  type ReferenceStack,
  startAnvil,
  type TrackedVault,
  write,
} from '@vault-yield/devstack/chain';
import { getSqrtRatioAtTick, MAX_TICK, MIN_TICK } from '@vault-yield/domain';
import fc from 'fast-check';
import type { Address, Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatExact, valueAt, valueAtHead } from './index.js';
import { positionAmounts, sqrtRatioAtTick } from './v3-math.js';

describe('independent v3 math', () => {
  it('sqrtRatioAtTick equals TickMath (checked against the domain copy at random ticks)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: MIN_TICK, max: MAX_TICK }),
        (t) => sqrtRatioAtTick(t) === getSqrtRatioAtTick(t),
      ),
    );
    expect(sqrtRatioAtTick(0)).toBe(1n << 96n);
    expect(sqrtRatioAtTick(MIN_TICK)).toBe(4295128739n);
    expect(sqrtRatioAtTick(MAX_TICK)).toBe(1461446703485210103287273052203988822378723970342n);
  });

  it('formats exact decimals', () => {
    expect(formatExact(123_450_000n, 6)).toBe('123.45');
    expect(formatExact(5n, 3)).toBe('0.005');
    expect(formatExact(7_000n, 3)).toBe('7');
  });
});

describe('valueAtHead on real Uniswap v3 pools', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  const rpc = (method: string, params: unknown[]) =>
    stack.clients.publicClient.request({ method, params } as never) as Promise<unknown>;

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
  });
  afterAll(async () => {
    await anvil?.stop();
  });

  /** A vault with an in-range position that earned fees from swaps across it. */
  async function earningVault(poolIndex: number, owner: Address, name: string): Promise<TrackedVault> {
    const pool = stack.pools[poolIndex]!;
    const v = await createVault(stack, owner, pool, name);
    await fundOwner(stack, v, 1_000_000n, 1_000_000n);
    const whole = (t: { decimals: number; usd: number }, usd: number) =>
      BigInt(Math.round((usd / t.usd) * 1e6)) * 10n ** BigInt(t.decimals - 6);
    await write(stack.clients, owner, v.address, vaultAbi, 'deposit', [
      pool.token0.address,
      whole(pool.token0, 50_000),
    ]);
    await write(stack.clients, owner, v.address, vaultAbi, 'deposit', [
      pool.token1.address,
      whole(pool.token1, 50_000),
    ]);
    await openAround(stack, v, 5 * pool.tickSpacing, 80n);
    await churn(stack, pool, 20 * pool.tickSpacing);
    await churn(stack, pool, -20 * pool.tickSpacing);
    return v;
  }

  /** What the pool's own burn returns for the principal (on a snapshot, reverted). */
  async function poolBurnAmounts(v: TrackedVault, id: bigint): Promise<{ amount0: bigint; amount1: bigint }> {
    const p = v.positions.get(id)!;
    const snap = (await rpc('evm_snapshot', [])) as Hex;
    try {
      await rpc('anvil_impersonateAccount', [v.address]);
      await rpc('anvil_setBalance', [v.address, '0x56bc75e2d63100000']);
      const r = await stack.clients.publicClient.simulateContract({
        address: v.pool.address,
        abi: uniswapV3PoolAbi,
        functionName: 'burn',
        args: [p.tickLower, p.tickUpper, p.liquidity],
        account: v.address,
      });
      return { amount0: r.result[0], amount1: r.result[1] };
    } finally {
      await rpc('evm_revert', [snap]);
    }
  }

  for (const [poolIndex, label] of [
    [0, 'WETH token0, fee 500'],
    [2, 'USDC token0, fee 3000'],
  ] as const) {
    it(`fees equal what collectFees transfers; principal equals the pool's burn (${label})`, async () => {
      const v = await earningVault(poolIndex, stack.accounts.owners[poolIndex]!, `truth-${poolIndex}`);
      const head = await stack.clients.publicClient.getBlockNumber();
      const truth = await valueAtHead(stack.clients.publicClient, v.address);
      // The probe burns were reverted: same head, and nothing changed for the vault.
      expect(await stack.clients.publicClient.getBlockNumber()).toBe(head);
      expect(truth.positions).toHaveLength(1);
      const [pos] = truth.positions;
      expect(pos!.fees0 + pos!.fees1).toBeGreaterThan(0n);
      expect(pos!.fees0).toBeGreaterThan(0n);
      expect(pos!.fees1).toBeGreaterThan(0n);
      expect({ amount0: pos!.amount0, amount1: pos!.amount1 }).toEqual(await poolBurnAmounts(v, pos!.id));
      // Also equal to what a second look computes (the snapshot left no trace).
      expect((await valueAtHead(stack.clients.publicClient, v.address)).valueUsd).toBe(truth.valueUsd);

      const got = await collectFees(stack, v, pos!.id);
      expect(got).toEqual({ fee0: pos!.fees0, fee1: pos!.fees1 });
      // Collecting moves fees from the pool to idle: the value is unchanged, to the last digit.
      const after = await valueAtHead(stack.clients.publicClient, v.address);
      expect(after.valueUsd).toBe(truth.valueUsd);
      expect(after.positions[0]).toMatchObject({ fees0: 0n, fees1: 0n });
      // The eth_call probe (nothing mined) agrees with the snapshot, now and at the past block.
      expect(await valueAt(stack.clients.publicClient, v.address, after.blockNumber)).toEqual(after);
      expect(await valueAt(stack.clients.publicClient, v.address, truth.blockNumber)).toEqual(truth);
    });
  }

  it('a closed position keeps its owed fees in the value until collected, then leaves', async () => {
    const v = await earningVault(1, stack.accounts.owners[3]!, 'truth-close');
    const [id] = [...v.positions.keys()];
    const before = await valueAtHead(stack.clients.publicClient, v.address);
    await close(stack, v, id!);
    const closed = await valueAtHead(stack.clients.publicClient, v.address);
    // Principal back to idle exactly as computed; fees still owed by the pool.
    expect(closed.valueUsd).toBe(before.valueUsd);
    expect(closed.positions).toHaveLength(1);
    expect(closed.positions[0]).toMatchObject({ liquidity: 0n, amount0: 0n, amount1: 0n });
    expect(closed.positions[0]!.fees0).toBe(before.positions[0]!.fees0);
    expect(closed.positions[0]!.fees1).toBe(before.positions[0]!.fees1);
    const got = await collectFees(stack, v, id!);
    expect(got).toEqual({ fee0: before.positions[0]!.fees0, fee1: before.positions[0]!.fees1 });
    const done = await valueAtHead(stack.clients.publicClient, v.address);
    expect(done.positions).toHaveLength(0);
    expect(done.valueUsd).toBe(before.valueUsd);
  });

  it('values idle, position and pending rewards at the feed prices', async () => {
    const v = await earningVault(0, stack.accounts.owners[4]!, 'truth-sum');
    await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'accrueRewards', [3n * 10n ** 18n]);
    const t = await valueAtHead(stack.clients.publicClient, v.address);
    const usd = (token: Address, amount: bigint) => {
      const p = t.prices[token]!;
      return (Number(amount) * Number(p.answer)) / 10 ** (p.tokenDecimals + p.feedDecimals);
    };
    const { token0, token1 } = v.pool;
    const pos = t.positions[0]!;
    const expected =
      usd(token0.address, t.balances[token0.address]! + pos.amount0 + pos.fees0) +
      usd(token1.address, t.balances[token1.address]! + pos.amount1 + pos.fees1) +
      1.5; // 3 RWD at 0.5
    expect(Number(t.valueUsd)).toBeCloseTo(expected, 6);
    expect(t.pendingRewards).toBe(3n * 10n ** 18n);
    expect(t.prices[stack.tokens.weth.address]!.answer).toBe(3000_00000000n);
    // v3 holdings depend on the price only, and the swaps brought the price back exactly: the
    // value is the 100k deposited plus the fees earned (± rounding).
    const feesUsd = usd(token0.address, pos.fees0) + usd(token1.address, pos.fees1);
    expect(feesUsd).toBeGreaterThan(1);
    expect(Math.abs(Number(t.valueUsd) - 1.5 - 100_000 - feesUsd)).toBeLessThan(0.01);
  });

  it('positionAmounts matches the pool below, inside and above the range', () => {
    const L = 10n ** 18n;
    const at = (tick: number) => ({ tick, sqrtPriceX96: sqrtRatioAtTick(tick) });
    expect(positionAmounts(at(-100), -60, 60, L).amount1).toBe(0n);
    expect(positionAmounts(at(60), -60, 60, L).amount0).toBe(0n);
    const inside = positionAmounts(at(0), -60, 60, L);
    expect(inside.amount0).toBeGreaterThan(0n);
    expect(inside.amount1).toBeGreaterThan(0n);
  });
});
