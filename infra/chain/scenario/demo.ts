import { vaultAbi, vaultFactoryAbi } from '@vault-yield/contracts';
import { type Address, type Hex, toEventSelector } from 'viem';
import { type FeedHeartbeatOptions, heartbeatOf, refreshDueFeeds } from '../feeds.js';
import { devChain } from '../rpc.js';
import type { ReferenceStack } from './deploy.js';
import { churn, movePrice } from './prices.js';
import {
  close,
  collectFees,
  createVault,
  fundOwner,
  openAround,
  rebalanceAround,
  resize,
  strategyId,
  swapIdle,
  type TrackedVault,
} from './vault-ops.js';
import { write } from './wallet.js';

/**
 * `heartbeatSeconds` / `heartbeats`: the feeds' heartbeats as the indexer is configured
 * (FEED_HEARTBEAT_SECONDS, default 3600; FEED_HEARTBEATS per feed). After each step, every feed
 * older than half its heartbeat gets a new round at its current price, so no price goes stale.
 */
export interface DemoOptions extends FeedHeartbeatOptions {
  /** Chain seconds between scenario steps (default 6 h), so timestamps look like a real history. */
  stepSeconds?: number;
  /** Told after each step of the scenario (its number, from 1): `npm start` shows the demo's progress. */
  onStep?: (step: number) => void;
}

/** Steps (clock jumps) the demo scenario plays. */
export const DEMO_STEPS = 10;

export interface DemoVault {
  address: Address;
  owner: Address;
  pool: Address;
  strategy: string;
}

export interface DemoResult {
  vaults: DemoVault[];
  /** First and last block of the scenario (inclusive). */
  fromBlock: bigint;
  toBlock: bigint;
  /** Price moves: the block where the feed and the pools holding the token moved together
   *  (real swaps), and the new USD price. */
  priceMoves: { blockNumber: bigint; token: 'WETH' | 'ARB'; usd: number }[];
  /** Vault-record events emitted (by Solidity event name), counted from the chain's logs. */
  eventCounts: Record<string, number>;
  /** Blocks right after the clock steps where feeds got a new round at their current price
   *  (same answer, new updatedAt), and which feeds. */
  feedRefreshes: { blockNumber: bigint; feeds: Address[] }[];
}

const ONE_RWD = 10n ** 18n;

/**
 * A realistic history on the reference stack (played by `npm start`: the README's "The two commands"):
 * three vaults on real Uniswap v3 pools (alice / WETH-USDC 0.05% narrow, bob / WETH-USDC 0.3%
 * wide, carol / USDC-ARB 0.3% with gauge rewards), deposits in both tokens, in-range positions,
 * trading fees from real swap volume, rewards, WETH 3000 → 3240 and ARB 0.8 → 0.864 (narrow
 * ranges fall out) → 2950 / 0.78, a rebalance, resizes, a performance fee, a strategy change, a
 * fee-rate change (on bob's vault, which is never charged a fee: no figure depends on it), a
 * suspension with reason + withdrawal while suspended + resume, carol's full exit, and a swap of
 * alice's vault in its own pool before her last rebalance.
 *
 * Its clock moves like a live chain's: right after each step's time jump, every feed older than
 * half its heartbeat gets a new round at its current price (one block), as a live Chainlink feed
 * beats, so no record of the demo is valued with a stale price. The demo has no step that means
 * to show a stale price (the suspension's "oracle deviation" is only its reason text); the
 * stale-price flags are exercised by test/chain-truth/stale.test.ts.
 */
export async function playDemoScenario(stack: ReferenceStack, opts: DemoOptions = {}): Promise<DemoResult> {
  const c = stack.clients;
  const dev = devChain(stack.rpcUrl);
  const { agent, guardian, feeCollector, treasury, owners } = stack.accounts;
  const { weth, usdc, arb } = stack.tokens;
  const feeds = Object.values(stack.tokens).map((t) => t.feed);
  const heartbeat = heartbeatOf(opts);
  const feedRefreshes: DemoResult['feedRefreshes'] = [];
  let played = 0;
  const step = async () => {
    opts.onStep?.(++played);
    await dev.increaseTime(opts.stepSeconds ?? 6 * 3600);
    const refreshed = await refreshDueFeeds(stack.rpcUrl, feeds, heartbeat);
    if (refreshed) feedRefreshes.push(refreshed);
  };
  const wad = (t: { decimals: number }, whole: number) =>
    BigInt(Math.round(whole * 1e6)) * 10n ** BigInt(t.decimals - 6);
  const [pool500, pool3000, poolArb] = stack.pools;
  const [alice, bob, carol] = [owners[0]!, owners[1 % owners.length]!, owners[2 % owners.length]!];
  const fromBlock = (await dev.blockNumber()) + 1n;
  const priceMoves: DemoResult['priceMoves'] = [];
  const move = async (token: typeof weth, usd: number) => {
    const blockNumber = await movePrice(stack, token, usd);
    priceMoves.push({ blockNumber, token: token.symbol as 'WETH' | 'ARB', usd });
  };

  const deposit = (v: TrackedVault, token: { address: Address; decimals: number }, whole: number) =>
    write(c, v.owner, v.address, vaultAbi, 'deposit', [token.address, wad(token, whole)]);
  const withdraw = (v: TrackedVault, token: { address: Address; decimals: number }, whole: number) =>
    write(c, v.owner, v.address, vaultAbi, 'withdraw', [token.address, wad(token, whole)]);
  const asAgent = {
    accrue: (v: TrackedVault, amount: bigint) => {
      v.pendingRewards += amount;
      return write(c, agent, v.address, vaultAbi, 'accrueRewards', [amount]);
    },
    claim: (v: TrackedVault, amount: bigint) => {
      v.pendingRewards -= amount;
      return write(c, agent, v.address, vaultAbi, 'claimRewards', [amount]);
    },
  };

  // 1. Three vaults, owners funded (mint + approve are token events, not vault records).
  const a = await createVault(stack, alice, pool500!, 'eth-usdc-narrow');
  const b = await createVault(stack, bob, pool3000!, 'eth-usdc-wide');
  const g = await createVault(stack, carol, poolArb!, 'usdc-arb-gauge');
  await fundOwner(stack, a, 100n, 500_000n);
  await fundOwner(stack, b, 100n, 500_000n);
  await fundOwner(stack, g, 500_000n, 500_000n);

  // 2. Deposits in both tokens.
  await step();
  await deposit(a, weth, 10);
  await deposit(a, usdc, 30_000);
  await deposit(b, weth, 5);
  await deposit(b, usdc, 15_000);
  await deposit(g, usdc, 24_000);
  await deposit(g, arb, 30_000);

  // 3. Positions in range: ±100 ticks (~1%), ±1200 (~12%), ±500 (~5%), 80% of idle.
  await step();
  const pa = await openAround(stack, a, 100, 80n);
  const pb = await openAround(stack, b, 1200, 80n);
  const pg = await openAround(stack, g, 500, 80n);

  // 4. Trading volume (swaps out and back across the ranges), fees collected, gauge rewards.
  await step();
  await churn(stack, pool500!, 150);
  await churn(stack, pool3000!, -600);
  await churn(stack, poolArb!, 300);
  await collectFees(stack, a, pa);
  await collectFees(stack, b, pb);
  await asAgent.accrue(g, 120n * ONE_RWD);
  await asAgent.accrue(a, 30n * ONE_RWD);

  // 5. WETH +8% and ARB +8%: the narrow and the ARB ranges fall out; the wide one stays in.
  await step();
  await move(weth, 3240);
  await move(arb, 0.864);

  // 6. Agent reacts: rebalance the narrow vault; bob adds capital and the wide position grows.
  await step();
  await rebalanceAround(stack, a, pa, 100, 80n);
  await deposit(b, weth, 2);
  await deposit(b, usdc, 12_000);
  const lb = b.positions.get(pb)!.liquidity;
  await resize(stack, b, pb, (lb * 5n) / 4n);
  await asAgent.claim(g, 100n * ONE_RWD);
  await write(c, feeCollector, g.address, vaultAbi, 'chargePerformanceFee', [
    usdc.address,
    wad(usdc, 25),
    treasury,
  ]);

  // 7. WETH back to 2950 and ARB to 0.78: the ARB range is in again, the rebalanced narrow one out.
  // Bob changes strategy; the fee collector lowers his vault's rate to 15 %.
  await step();
  await move(weth, 2950);
  await move(arb, 0.78);
  await write(c, bob, b.address, vaultAbi, 'selectStrategy', [strategyId('eth-usdc-mid')]);
  await resize(stack, b, pb, lb);
  await write(c, feeCollector, b.address, vaultAbi, 'setPerformanceFee', [1500]);

  // 8. Guardian suspends bob's vault; exits stay available; then resumes.
  await step();
  await write(c, guardian, b.address, vaultAbi, 'suspend', [
    'oracle deviation: WETH/USD feed disagrees with pool',
  ]);
  await withdraw(b, usdc, 1_000);
  await step();
  await write(c, guardian, b.address, vaultAbi, 'resume', []);

  // 9. Carol exits: volume, close, then the fees still owed to the closed position collected,
  // remaining rewards, completeExit (sweeps idle → Withdrawn ×3).
  await step();
  await churn(stack, poolArb!, -200);
  await write(c, carol, g.address, vaultAbi, 'requestExit', []);
  await close(stack, g, pg);
  await collectFees(stack, g, pg);
  await asAgent.claim(g, g.pendingRewards);
  await write(c, agent, g.address, vaultAbi, 'completeExit', []);

  // 10. Alice: swaps a fifth of her idle token0 for token1 in her pool (the agent setting the
  // ratio), back in range around 2950, claims rewards, takes 0.25 WETH and 5000 USDC out, pays a fee in WETH.
  await step();
  await swapIdle(stack, a, true, 20n);
  await rebalanceAround(stack, a, pa, 100, 80n);
  await churn(stack, pool500!, -80);
  await asAgent.claim(a, a.pendingRewards);
  await withdraw(a, weth, 0.25);
  await withdraw(a, usdc, 5_000);
  await write(c, feeCollector, a.address, vaultAbi, 'chargePerformanceFee', [
    weth.address,
    wad(weth, 0.01),
    treasury,
  ]);

  const toBlock = await dev.blockNumber();
  const vaults = [a, b, g];
  return {
    vaults: vaults.map((v) => ({
      address: v.address,
      owner: v.owner,
      pool: v.pool.address,
      strategy: v.strategy,
    })),
    fromBlock,
    toBlock,
    priceMoves,
    eventCounts: await countVaultEvents(
      stack,
      vaults.map((v) => v.address),
      fromBlock,
      toBlock,
    ),
    feedRefreshes,
  };
}

/** Counts VaultCreated (factory) and vault events in a block range, by event name. */
export async function countVaultEvents(
  stack: ReferenceStack,
  vaults: Address[],
  fromBlock: bigint,
  toBlock: bigint,
): Promise<Record<string, number>> {
  const names = new Map<Hex, string>();
  for (const item of [...vaultAbi, ...vaultFactoryAbi]) {
    if (item.type === 'event') names.set(toEventSelector(item), item.name);
  }
  const logs = await stack.clients.publicClient.getLogs({
    address: [stack.factory, ...vaults],
    fromBlock,
    toBlock,
  });
  const counts: Record<string, number> = {};
  for (const log of logs) {
    const name = names.get(log.topics[0] as Hex);
    if (!name || ['FeedSet', 'RolesSet', 'VenueSet', 'GaugeSet', 'DefaultPerformanceFeeSet'].includes(name))
      continue;
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}
