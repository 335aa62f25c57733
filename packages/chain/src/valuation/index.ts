import {
  mockAggregatorAbi,
  testTokenAbi,
  uniswapV3PoolAbi,
  vaultAbi,
  vaultFactoryAbi,
} from '@vault-yield/contracts';
import type { PoolContext } from '@vault-yield/domain';
import { type Address, zeroAddress } from 'viem';
import { type ChainClient, headGuardOf } from '../client/index.js';
import { BoundedCache, cachedPromise } from './cache.js';
import { priceOfAnswer } from './decimal.js';

export { NO_PRICE, priceOfAnswer } from './decimal.js';

export class ValuationError extends Error {
  override name = 'ValuationError';
}

export interface ValuationReaderConfig {
  /** The VaultFactory: its feedOf(token) registry gives each token's USD feed. */
  factory: Address;
  /** Entries kept in the (token, block) price and (pool, block) slot0 caches. Default 10 000. */
  cacheSize?: number;
}

/** The immutables of a vault (read once, cached). */
export interface VaultInfo {
  vault: Address;
  owner: Address;
  agent: Address;
  token0: Address;
  token1: Address;
  pool: Address;
  rewardToken: Address;
}

export interface TokenInfo {
  address: Address;
  symbol: string;
  decimals: number;
}

export interface ValuationReader {
  vaultInfo(vault: Address): Promise<VaultInfo>;
  tokenInfo(token: Address): Promise<TokenInfo>;
  /** USD per whole token at the block: feedOf(token) at that block, then its latestRoundData. */
  priceUsd(token: Address, blockNumber: bigint | number): Promise<string>;
  poolContext(pool: Address, blockNumber: bigint | number): Promise<PoolContext>;
}

function lower(a: string): Address {
  return a.toLowerCase() as Address;
}

/** Reads valuation contexts at historical blocks (needs an archive-capable node; anvil is one). */
export function createValuationReader(client: ChainClient, config: ValuationReaderConfig): ValuationReader {
  const factory = config.factory;
  const size = config.cacheSize ?? 10_000;
  const immutables = new BoundedCache<Promise<unknown>>(size);
  const perBlock = new BoundedCache<Promise<unknown>>(size);

  const once = <V>(key: string, make: () => Promise<V>) =>
    cachedPromise(immutables as BoundedCache<Promise<V>>, key, make);
  const atBlock = <V>(key: string, make: () => Promise<V>) =>
    cachedPromise(perBlock as BoundedCache<Promise<V>>, key, make);

  const vaultInfo = (vault: Address): Promise<VaultInfo> =>
    once(`vault:${lower(vault)}`, async () => {
      const read = (functionName: 'owner' | 'agent' | 'token0' | 'token1' | 'pool' | 'rewardToken') =>
        client.readContract({ address: vault, abi: vaultAbi, functionName });
      const [owner, agent, token0, token1, pool, rewardToken] = await Promise.all([
        read('owner'),
        read('agent'),
        read('token0'),
        read('token1'),
        read('pool'),
        read('rewardToken'),
      ]);
      return {
        vault: lower(vault),
        owner: lower(owner),
        agent: lower(agent),
        token0: lower(token0),
        token1: lower(token1),
        pool: lower(pool),
        rewardToken: lower(rewardToken),
      };
    });

  const tokenInfo = (token: Address): Promise<TokenInfo> =>
    once(`token:${lower(token)}`, async () => {
      const [symbol, decimals] = await Promise.all([
        client.readContract({ address: token, abi: testTokenAbi, functionName: 'symbol' }),
        client.readContract({ address: token, abi: testTokenAbi, functionName: 'decimals' }),
      ]);
      return { address: lower(token), symbol, decimals };
    });

  const priceUsd = (token: Address, blockNumber: bigint | number): Promise<string> => {
    const block = BigInt(blockNumber);
    return atBlock(`price:${lower(token)}@${block}`, () =>
      headGuardOf(client).at(block, async () => {
        const feed = await client.readContract({
          address: factory,
          abi: vaultFactoryAbi,
          functionName: 'feedOf',
          args: [token],
          blockNumber: block,
        });
        if (feed === zeroAddress)
          throw new ValuationError(`no USD feed registered for token ${token} at block ${block}`);
        const [decimals, round] = await Promise.all([
          once(`feedDecimals:${lower(feed)}`, () =>
            client.readContract({ address: feed, abi: mockAggregatorAbi, functionName: 'decimals' }),
          ),
          client.readContract({
            address: feed,
            abi: mockAggregatorAbi,
            functionName: 'latestRoundData',
            blockNumber: block,
          }),
        ]);
        return priceOfAnswer(round[1], decimals);
      }),
    );
  };

  const poolContext = (pool: Address, blockNumber: bigint | number): Promise<PoolContext> => {
    const block = BigInt(blockNumber);
    return atBlock(`pool:${lower(pool)}@${block}`, () =>
      headGuardOf(client).at(block, async () => {
        const ids = once(`pool:${lower(pool)}`, async () => {
          const read = (functionName: 'fee' | 'token0' | 'token1') =>
            client.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName });
          const [fee, venue, token0, token1] = await Promise.all([
            read('fee'),
            client.readContract({
              address: factory,
              abi: vaultFactoryAbi,
              functionName: 'venueOf',
              args: [pool],
            }),
            read('token0'),
            read('token1'),
          ]);
          return {
            fee: Number(fee),
            venue: String(venue),
            token0: lower(String(token0)),
            token1: lower(String(token1)),
          };
        });
        const [id, slot0] = await Promise.all([
          ids,
          client.readContract({
            address: pool,
            abi: uniswapV3PoolAbi,
            functionName: 'slot0',
            blockNumber: block,
          }),
        ]);
        return {
          address: lower(pool),
          venue: id.venue,
          feeTier: id.fee,
          sqrtPriceX96: slot0[0].toString(),
          tick: slot0[1],
          token0: id.token0,
          token1: id.token1,
        };
      }),
    );
  };

  return { vaultInfo, tokenInfo, priceUsd, poolContext };
}
