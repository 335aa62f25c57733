import { mockAggregatorAbi, vaultAbi, vaultFactoryAbi } from '@vault-yield/contracts';
import { type Address, zeroAddress } from 'viem';
import type { ChainClient } from '../client/index.js';

/** A token's USD feed at a block, as the factory's registry names it. */
export interface TokenFeedState {
  token: Address;
  /** zeroAddress when the factory has no feed for the token at that block. */
  feed: Address;
  feedDecimals: number;
  /** latestRoundData().answer at the block (raw, scaled by feedDecimals). */
  answer: bigint;
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
  const block = BigInt(blockNumber);
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
    return { token: token.toLowerCase() as Address, feed, feedDecimals: 0, answer: 0n };
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
  const block = BigInt(blockNumber);
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
