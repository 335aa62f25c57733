import { testTokenAbi, vaultAbi, vaultFactoryAbi } from '@vault-yield/contracts';
import { type Address, decodeEventLog, toHex } from 'viem';
import type { ReferenceStack, StackPool } from './deploy.js';
import { readSlot0 } from './market.js';
import { floorTick, getAmountsForLiquidity, getLiquidityForAmounts, getSqrtRatioAtTick } from './math.js';
import { write } from './wallet.js';

export interface TrackedPosition {
  id: bigint;
  tickLower: number;
  tickUpper: number;
  liquidity: bigint;
}

/** The driver's view of one vault: enough to compute amounts the way the fold will. */
export interface TrackedVault {
  address: Address;
  owner: Address;
  pool: StackPool;
  strategy: string;
  positions: Map<bigint, TrackedPosition>;
  nextPositionId: bigint;
  pendingRewards: bigint;
}

/** Right-padded ASCII bytes32 (the strategy id encoding). */
export function strategyId(text: string): `0x${string}` {
  return toHex(text, { size: 32 });
}

export async function createVault(
  stack: ReferenceStack,
  owner: Address,
  pool: StackPool,
  strategy: string,
): Promise<TrackedVault> {
  const r = await write(stack.clients, owner, stack.factory, vaultFactoryAbi, 'createVault', [
    owner,
    stack.accounts.agent,
    strategyId(strategy),
    stack.token0.address,
    stack.token1.address,
    pool.address,
    stack.tokens.rwd.address,
  ]);
  for (const log of r.logs) {
    try {
      const e = decodeEventLog({ abi: vaultFactoryAbi, data: log.data, topics: log.topics });
      if (e.eventName === 'VaultCreated') {
        return {
          address: e.args.vault.toLowerCase() as Address,
          owner,
          pool,
          strategy,
          positions: new Map(),
          nextPositionId: 1n,
          pendingRewards: 0n,
        };
      }
    } catch {
      // another contract's log
    }
  }
  throw new Error('createVault emitted no VaultCreated');
}

/** Mints tokens to an owner and approves the vault for both pool tokens. */
export async function fundOwner(stack: ReferenceStack, v: TrackedVault, whole0: bigint, whole1: bigint) {
  const c = stack.clients;
  const { token0, token1 } = stack;
  const { deployer } = stack.accounts;
  await write(c, deployer, token0.address, testTokenAbi, 'mint', [
    v.owner,
    whole0 * 10n ** BigInt(token0.decimals),
  ]);
  await write(c, deployer, token1.address, testTokenAbi, 'mint', [
    v.owner,
    whole1 * 10n ** BigInt(token1.decimals),
  ]);
  const max = (1n << 256n) - 1n;
  await write(c, v.owner, token0.address, testTokenAbi, 'approve', [v.address, max]);
  await write(c, v.owner, token1.address, testTokenAbi, 'approve', [v.address, max]);
}

export async function idle(
  stack: ReferenceStack,
  v: TrackedVault,
): Promise<{ idle0: bigint; idle1: bigint }> {
  const read = (token: Address) =>
    stack.clients.publicClient.readContract({
      address: token,
      abi: testTokenAbi,
      functionName: 'balanceOf',
      args: [v.address],
    });
  const [idle0, idle1] = await Promise.all([read(stack.token0.address), read(stack.token1.address)]);
  return { idle0, idle1 };
}

function rangeAround(tick: number, halfWidth: number, spacing: number) {
  const tickLower = floorTick(tick - halfWidth, spacing);
  const tickUpper = floorTick(tick + halfWidth, spacing) + spacing;
  return { tickLower, tickUpper, sa: getSqrtRatioAtTick(tickLower), sb: getSqrtRatioAtTick(tickUpper) };
}

function positionAmounts(sp: bigint, p: Pick<TrackedPosition, 'tickLower' | 'tickUpper'>, liquidity: bigint) {
  return getAmountsForLiquidity(
    sp,
    getSqrtRatioAtTick(p.tickLower),
    getSqrtRatioAtTick(p.tickUpper),
    liquidity,
  );
}

/** Opens a position of ±halfWidth ticks around the pool tick with `sharePct`% of the idle balances. */
export async function openAround(
  stack: ReferenceStack,
  v: TrackedVault,
  halfWidth: number,
  sharePct: bigint,
) {
  const { sqrtPriceX96: sp, tick } = await readSlot0(stack, v.pool.address);
  const { idle0, idle1 } = await idle(stack, v);
  const r = rangeAround(tick, halfWidth, v.pool.tickSpacing);
  const liquidity = getLiquidityForAmounts(
    sp,
    r.sa,
    r.sb,
    (idle0 * sharePct) / 100n,
    (idle1 * sharePct) / 100n,
  );
  const { amount0, amount1 } = getAmountsForLiquidity(sp, r.sa, r.sb, liquidity);
  await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'openPosition', [
    r.tickLower,
    r.tickUpper,
    liquidity,
    amount0,
    amount1,
  ]);
  const id = v.nextPositionId++;
  v.positions.set(id, { id, tickLower: r.tickLower, tickUpper: r.tickUpper, liquidity });
  return id;
}

/** Sets a position's liquidity; deltas are the LiquidityAmounts difference at the pool price. */
export async function resize(stack: ReferenceStack, v: TrackedVault, id: bigint, liquidity: bigint) {
  const p = v.positions.get(id)!;
  const { sqrtPriceX96: sp } = await readSlot0(stack, v.pool.address);
  const before = positionAmounts(sp, p, p.liquidity);
  const after = positionAmounts(sp, p, liquidity);
  await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'resizePosition', [
    id,
    liquidity,
    after.amount0 - before.amount0,
    after.amount1 - before.amount1,
  ]);
  p.liquidity = liquidity;
}

/** Withdraws the position at the pool price and redeploys idle funds around the current tick. */
export async function rebalanceAround(
  stack: ReferenceStack,
  v: TrackedVault,
  id: bigint,
  halfWidth: number,
  sharePct: bigint,
) {
  const p = v.positions.get(id)!;
  const { sqrtPriceX96: sp, tick } = await readSlot0(stack, v.pool.address);
  const out = positionAmounts(sp, p, p.liquidity);
  const { idle0, idle1 } = await idle(stack, v);
  const r = rangeAround(tick, halfWidth, v.pool.tickSpacing);
  const liquidity = getLiquidityForAmounts(
    sp,
    r.sa,
    r.sb,
    ((idle0 + out.amount0) * sharePct) / 100n,
    ((idle1 + out.amount1) * sharePct) / 100n,
  );
  const into = getAmountsForLiquidity(sp, r.sa, r.sb, liquidity);
  await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'rebalancePosition', [
    id,
    r.tickLower,
    r.tickUpper,
    liquidity,
    out.amount0,
    out.amount1,
    into.amount0,
    into.amount1,
  ]);
  Object.assign(p, { tickLower: r.tickLower, tickUpper: r.tickUpper, liquidity });
}

export async function close(stack: ReferenceStack, v: TrackedVault, id: bigint) {
  const p = v.positions.get(id)!;
  const { sqrtPriceX96: sp } = await readSlot0(stack, v.pool.address);
  const out = positionAmounts(sp, p, p.liquidity);
  await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'closePosition', [
    id,
    out.amount0,
    out.amount1,
  ]);
  p.liquidity = 0n;
}

/** Collects trading fees worth `bps` basis points of the position's current amounts. */
export async function collectFees(stack: ReferenceStack, v: TrackedVault, id: bigint, bps: bigint) {
  const p = v.positions.get(id)!;
  const { sqrtPriceX96: sp } = await readSlot0(stack, v.pool.address);
  const held = positionAmounts(sp, p, p.liquidity === 0n ? 10n ** 15n : p.liquidity);
  const fee0 = (held.amount0 * bps) / 10_000n + 1n;
  const fee1 = (held.amount1 * bps) / 10_000n + 1n;
  await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'collectFees', [id, fee0, fee1]);
  return { fee0, fee1 };
}
