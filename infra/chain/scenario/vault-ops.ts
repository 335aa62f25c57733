import { swapperAbi, testTokenAbi, vaultAbi, vaultFactoryAbi } from '@vault-yield/contracts';
import { type Address, decodeEventLog, toHex } from 'viem';
import type { ReferenceStack, StackPool } from './deploy.js';
import { floorTick, getAmountsForLiquidity, getLiquidityForAmounts, getSqrtRatioAtTick } from './math.js';
import { readSlot0 } from './prices.js';
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

/** Sets the performance-fee rate the factory gives the vaults created after it (as its admin, the deployer). */
export function setDefaultFeeRate(stack: ReferenceStack, bps: number) {
  return write(
    stack.clients,
    stack.accounts.deployer,
    stack.factory,
    vaultFactoryAbi,
    'setDefaultPerformanceFee',
    [bps],
  );
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
    pool.token0.address,
    pool.token1.address,
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

/** Mints the pool's two tokens to an owner and approves the vault for both. */
export async function fundOwner(stack: ReferenceStack, v: TrackedVault, whole0: bigint, whole1: bigint) {
  const c = stack.clients;
  const { token0, token1 } = v.pool;
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
  const [idle0, idle1] = await Promise.all([read(v.pool.token0.address), read(v.pool.token1.address)]);
  return { idle0, idle1 };
}

function rangeAround(tick: number, halfWidth: number, spacing: number) {
  const tickLower = floorTick(tick - halfWidth, spacing);
  const tickUpper = floorTick(tick + halfWidth, spacing) + spacing;
  return { tickLower, tickUpper, sa: getSqrtRatioAtTick(tickLower), sb: getSqrtRatioAtTick(tickUpper) };
}

/**
 * Liquidity minted for the vault by someone else (the swapper, paid from its own balance): a
 * position the vault holds on chain but never opened — `range` given (e.g. a live position's, so
 * the pool merges them) or ±halfWidth ticks around the pool tick; `usd` roughly what it is worth.
 * Returns the range.
 */
export async function giftPosition(
  stack: ReferenceStack,
  v: Pick<TrackedVault, 'address' | 'pool'>,
  usd: number,
  at: { halfWidth: number } | { tickLower: number; tickUpper: number },
): Promise<{ tickLower: number; tickUpper: number }> {
  const { sqrtPriceX96: sp, tick } = await readSlot0(stack, v.pool.address);
  const r =
    'halfWidth' in at
      ? rangeAround(tick, at.halfWidth, v.pool.tickSpacing)
      : { ...at, sa: getSqrtRatioAtTick(at.tickLower), sb: getSqrtRatioAtTick(at.tickUpper) };
  const whole = (t: StackPool['token0']) =>
    BigInt(Math.max(1, Math.round((usd / t.usd) * 10 ** Math.min(t.decimals, 6)))) *
    10n ** BigInt(Math.max(0, t.decimals - 6));
  const liquidity = getLiquidityForAmounts(sp, r.sa, r.sb, whole(v.pool.token0), whole(v.pool.token1));
  if (liquidity === 0n) throw new Error('giftPosition: no liquidity for that value (emitted no Mint)');
  await write(stack.clients, stack.accounts.deployer, stack.swapper, swapperAbi, 'mintFor', [
    v.pool.address,
    v.address,
    r.tickLower,
    r.tickUpper,
    liquidity,
  ]);
  return { tickLower: r.tickLower, tickUpper: r.tickUpper };
}

/** Liquidity worth `sharePct`% of the given balances in a range at the pool price. */
function liquidityFor(sp: bigint, r: { sa: bigint; sb: bigint }, a0: bigint, a1: bigint, sharePct: bigint) {
  return getLiquidityForAmounts(sp, r.sa, r.sb, (a0 * sharePct) / 100n, (a1 * sharePct) / 100n);
}

/** Opens a position of ±halfWidth ticks around the pool tick with `sharePct`% of the idle
 * balances (the pool computes and takes the amounts). */
export async function openAround(
  stack: ReferenceStack,
  v: TrackedVault,
  halfWidth: number,
  sharePct: bigint,
) {
  const { sqrtPriceX96: sp, tick } = await readSlot0(stack, v.pool.address);
  const { idle0, idle1 } = await idle(stack, v);
  const r = rangeAround(tick, halfWidth, v.pool.tickSpacing);
  const liquidity = liquidityFor(sp, r, idle0, idle1, sharePct);
  await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'openPosition', [
    r.tickLower,
    r.tickUpper,
    liquidity,
  ]);
  const id = v.nextPositionId++;
  v.positions.set(id, { id, tickLower: r.tickLower, tickUpper: r.tickUpper, liquidity });
  return id;
}

/** Sets a position's liquidity (up: minted from idle; down: principal back to idle). */
export async function resize(stack: ReferenceStack, v: TrackedVault, id: bigint, liquidity: bigint) {
  const p = v.positions.get(id)!;
  await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'resizePosition', [id, liquidity]);
  p.liquidity = liquidity;
}

/** Moves the position to ±halfWidth around the current tick with `sharePct`% of what it and the
 * idle balances hold (estimated at the pool price; the pool settles the exact amounts). */
export async function rebalanceAround(
  stack: ReferenceStack,
  v: TrackedVault,
  id: bigint,
  halfWidth: number,
  sharePct: bigint,
) {
  const p = v.positions.get(id)!;
  const { sqrtPriceX96: sp, tick } = await readSlot0(stack, v.pool.address);
  const out = getAmountsForLiquidity(
    sp,
    getSqrtRatioAtTick(p.tickLower),
    getSqrtRatioAtTick(p.tickUpper),
    p.liquidity,
  );
  const { idle0, idle1 } = await idle(stack, v);
  const r = rangeAround(tick, halfWidth, v.pool.tickSpacing);
  const liquidity = liquidityFor(sp, r, idle0 + out.amount0, idle1 + out.amount1, sharePct);
  await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'rebalancePosition', [
    id,
    r.tickLower,
    r.tickUpper,
    liquidity,
  ]);
  Object.assign(p, { tickLower: r.tickLower, tickUpper: r.tickUpper, liquidity });
}

/** Burns the whole position (principal to idle; its fees stay owed until collectFees). */
export async function close(stack: ReferenceStack, v: TrackedVault, id: bigint) {
  const p = v.positions.get(id)!;
  await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'closePosition', [id]);
  p.liquidity = 0n;
}

/** Collects every fee the pool owes the position; returns what the vault received. */
export async function collectFees(stack: ReferenceStack, v: TrackedVault, id: bigint) {
  const r = await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'collectFees', [id]);
  for (const log of r.logs) {
    if (log.address.toLowerCase() !== v.address) continue;
    try {
      const e = decodeEventLog({ abi: vaultAbi, data: log.data, topics: log.topics });
      if (e.eventName === 'FeesCollected') return { fee0: e.args.amount0, fee1: e.args.amount1 };
    } catch {
      // not a vault event
    }
  }
  throw new Error('collectFees emitted no FeesCollected');
}

/** What the vault paid and received in one of its own swaps (its Swapped event). */
export interface VaultSwap {
  tokenIn: Address;
  amountIn: bigint;
  tokenOut: Address;
  amountOut: bigint;
}

/**
 * The agent swaps `sharePct`% of the vault's idle token0 (zeroForOne) or token1 in its own pool,
 * with no price limit but the pool's bounds; null when that is nothing. Returns the Swapped event.
 */
export async function swapIdle(
  stack: ReferenceStack,
  v: TrackedVault,
  zeroForOne: boolean,
  sharePct: bigint,
): Promise<VaultSwap | null> {
  const { idle0, idle1 } = await idle(stack, v);
  const amountIn = ((zeroForOne ? idle0 : idle1) * sharePct) / 100n;
  if (amountIn === 0n) return null;
  // TickMath's bounds, one inside (the pool refuses the bounds themselves).
  const limit = zeroForOne ? 4295128739n + 1n : 1461446703485210103287273052203988822378723970342n - 1n;
  const r = await write(stack.clients, stack.accounts.agent, v.address, vaultAbi, 'swap', [
    zeroForOne,
    amountIn,
    limit,
  ]);
  for (const log of r.logs) {
    if (log.address.toLowerCase() !== v.address) continue;
    try {
      const e = decodeEventLog({ abi: vaultAbi, data: log.data, topics: log.topics });
      if (e.eventName === 'Swapped')
        return {
          tokenIn: e.args.tokenIn.toLowerCase() as Address,
          amountIn: e.args.amountIn,
          tokenOut: e.args.tokenOut.toLowerCase() as Address,
          amountOut: e.args.amountOut,
        };
    } catch {
      // not a vault event
    }
  }
  throw new Error('swap emitted no Swapped');
}
