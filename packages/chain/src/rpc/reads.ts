import { mockAggregatorAbi, vaultAbi, vaultFactoryAbi } from '@vault-yield/contracts';
import { type Address, zeroAddress } from 'viem';
import { type ChainClient, headGuardOf } from '../client/index.js';

/** A token's USD feed at a block, as the factory's registry names it. */
export interface TokenFeedState {
  token: Address;
  /** zeroAddress when the factory has no feed for the token at that block. */
  feed: Address;
  feedDecimals: number;
  /** latestRoundData().answer at the block (raw, scaled by feedDecimals). */
  answer: bigint;
  /** latestRoundData().updatedAt at the block (Unix seconds; 0 without a feed). */
  updatedAt: number;
}

/**
 * feedOf(token) on the factory at `blockNumber`, then that feed's decimals and latest answer at
 * the same block: the starting point the indexer then moves forward with AnswerUpdated / FeedSet.
 */
export async function readTokenFeed(
  client: ChainClient,
  factory: Address,
  token: Address,
  blockNumber: number,
): Promise<TokenFeedState> {
  return headGuardOf(client).at(blockNumber, () => tokenFeedAt(client, factory, token, BigInt(blockNumber)));
}

async function tokenFeedAt(
  client: ChainClient,
  factory: Address,
  token: Address,
  block: bigint,
): Promise<TokenFeedState> {
  const feed = (
    await client.readContract({
      address: factory,
      abi: vaultFactoryAbi,
      functionName: 'feedOf',
      args: [token],
      blockNumber: block,
    })
  ).toLowerCase() as Address;
  if (feed === zeroAddress)
    return { token: token.toLowerCase() as Address, feed, feedDecimals: 0, answer: 0n, updatedAt: 0 };
  const [feedDecimals, round] = await Promise.all([
    client.readContract({
      address: feed,
      abi: mockAggregatorAbi,
      functionName: 'decimals',
      blockNumber: block,
    }),
    client.readContract({
      address: feed,
      abi: mockAggregatorAbi,
      functionName: 'latestRoundData',
      blockNumber: block,
    }),
  ]);
  return {
    token: token.toLowerCase() as Address,
    feed,
    feedDecimals: Number(feedDecimals),
    answer: round[1],
    updatedAt: Number(round[3]),
  };
}

/** An open position of a vault as its contract holds it. */
export interface VaultPositionState {
  positionId: string;
  tickLower: number;
  tickUpper: number;
  liquidity: string;
}

/**
 * The vault's open positions at `blockNumber` (liquidity > 0), read from the contract: how the
 * indexer rebuilds a vault's range state after a reorg, without replaying its history.
 */
export async function readVaultPositions(
  client: ChainClient,
  vault: Address,
  blockNumber: number,
): Promise<VaultPositionState[]> {
  return headGuardOf(client).at(blockNumber, () => vaultPositionsAt(client, vault, BigInt(blockNumber)));
}

async function vaultPositionsAt(
  client: ChainClient,
  vault: Address,
  block: bigint,
): Promise<VaultPositionState[]> {
  const next = await client.readContract({
    address: vault,
    abi: vaultAbi,
    functionName: 'nextPositionId',
    blockNumber: block,
  });
  const ids: bigint[] = [];
  for (let i = 1n; i < next; i++) ids.push(i);
  const rows = await Promise.all(
    ids.map((id) =>
      client.readContract({
        address: vault,
        abi: vaultAbi,
        functionName: 'positions',
        args: [id],
        blockNumber: block,
      }),
    ),
  );
  const out: VaultPositionState[] = [];
  rows.forEach((r, i) => {
    const [tickLower, tickUpper, liquidity, exists] = r;
    if (exists && liquidity > 0n) {
      out.push({ positionId: ids[i]!.toString(), tickLower, tickUpper, liquidity: liquidity.toString() });
    }
  });
  return out;
}

/**
 * A vault's rewardToken() read at a block (its creation block): immutables are read where the
 * vault is known to be the factory's Vault, whatever its address holds later.
 */
export async function readVaultRewardToken(
  client: ChainClient,
  vault: Address,
  blockNumber: number,
): Promise<Address> {
  const t = await client.readContract({
    address: vault,
    abi: vaultAbi,
    functionName: 'rewardToken',
    blockNumber: BigInt(blockNumber),
  });
  return t.toLowerCase() as Address;
}

/**
 * rewardToken() of many vaults, each read at its own block (its creation block), in one deployless
 * multicall per block (Multicall3 run from its creation code inside eth_call: no contract needs to
 * be deployed on the chain). Discovery of a thousand vaults is a handful of eth_calls instead of a
 * thousand. Results in input order; throws the first failed read's error.
 */
export async function readVaultRewardTokens(
  client: ChainClient,
  reads: readonly { vault: Address; blockNumber: number }[],
  opts: { callsPerMulticall?: number } = {},
): Promise<Address[]> {
  // Deployless multicall passes the calls as constructor arguments (about 160 bytes each; initcode
  // is capped at 48 KiB, EIP-3860) and gets the results back as the created code (about 160
  // bytes each; code is capped at 24 KiB, EIP-170): 100 per eth_call stays well under both.
  const perCall = opts.callsPerMulticall ?? 100;
  const byBlock = new Map<number, number[]>();
  reads.forEach((r, i) => {
    const list = byBlock.get(r.blockNumber) ?? [];
    list.push(i);
    byBlock.set(r.blockNumber, list);
  });
  const out: Address[] = new Array(reads.length);
  const jobs: Promise<void>[] = [];
  for (const [block, indexes] of byBlock) {
    for (let start = 0; start < indexes.length; start += perCall) {
      const slice = indexes.slice(start, start + perCall);
      jobs.push(
        client
          .multicall({
            contracts: slice.map((i) => ({
              address: reads[i]!.vault,
              abi: vaultAbi,
              functionName: 'rewardToken' as const,
            })),
            blockNumber: BigInt(block),
            allowFailure: true,
            deployless: true,
            // Calldata bytes per aggregate3 call: keep the whole slice in one eth_call.
            batchSize: slice.length * 4 + 1,
          })
          .then((results) => {
            results.forEach((r, j) => {
              if (r.status === 'failure') throw r.error;
              out[slice[j]!] = (r.result as string).toLowerCase() as Address;
            });
          }),
      );
    }
  }
  await Promise.all(jobs);
  return out;
}
