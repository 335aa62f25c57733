import { mockAggregatorAbi, uniswapV3PoolAbi, vaultAbi, vaultFactoryAbi } from '@vault-yield/contracts';
import { type AbiEvent, type Hex, parseAbiItem, toEventSelector } from 'viem';

type EventOf<abi extends readonly unknown[]> = Extract<abi[number], { type: 'event' }>;

function eventsOf<const abi extends readonly { type: string }[]>(abi: abi): EventOf<abi>[] {
  return abi.filter((item) => item.type === 'event') as EventOf<abi>[];
}

function eventNamed<const abi extends readonly { type: string; name?: string }[], N extends string>(
  abi: abi,
  name: N,
): Extract<EventOf<abi>, { name: N }> {
  const e = abi.find((item) => item.type === 'event' && item.name === name);
  if (!e) throw new Error(`event ${name} not in ABI`);
  return e as Extract<EventOf<abi>, { name: N }>;
}

/**
 * Events of VaultFactory: VaultCreated (a vault record) and FeedSet, RolesSet (registry).
 * VenueSet, GaugeSet and DefaultPerformanceFeeSet are not watched: venues are read when a pool is
 * first valued, and a new vault's rate is carried by its own VaultCreated.
 */
export const factoryEventsAbi = eventsOf(vaultFactoryAbi).filter(
  (e) => e.name === 'VaultCreated' || e.name === 'FeedSet' || e.name === 'RolesSet',
) as Extract<EventOf<typeof vaultFactoryAbi>, { name: 'VaultCreated' | 'FeedSet' | 'RolesSet' }>[];
/** The 16 vault events, each mapping to one record type. */
export const vaultEventsAbi = eventsOf(vaultAbi);
/** Uniswap v3 Swap(sender, recipient, amount0, amount1, sqrtPriceX96, liquidity, tick). */
export const swapEventAbi = eventNamed(uniswapV3PoolAbi, 'Swap');
/**
 * Uniswap v3 Mint(sender, owner indexed, tickLower indexed, tickUpper indexed, amount, amount0,
 * amount1): watched on the vaults' pools for liquidity minted with a vault as owner by someone
 * else (a position the vault holds but does not list).
 */
export const mintEventAbi = eventNamed(uniswapV3PoolAbi, 'Mint');
/** Chainlink AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt). */
export const answerUpdatedEventAbi = eventNamed(mockAggregatorAbi, 'AnswerUpdated');
/**
 * ERC-20 Transfer: watched for transfers *to* vaults, so tokens sent straight to a vault (no vault
 * event) make it due for a record at that block, where the fold reconciles its holdings.
 */
export const transferEventAbi = parseAbiItem(
  'event Transfer(address indexed from, address indexed to, uint256 value)',
);
export const vaultCreatedEventAbi = eventNamed(vaultFactoryAbi, 'VaultCreated');
const feedSetEventAbi = eventNamed(vaultFactoryAbi, 'FeedSet');

function topicsOf(events: readonly AbiEvent[]): Hex[] {
  return events.map((e) => toEventSelector(e));
}

/**
 * topic0 lists for eth_getLogs filters. `factory` includes FeedSet and RolesSet so one query on
 * the factory address sees vault creations and feed changes; pass `[topics]` as the filter's
 * first topic position (an OR list).
 */
export const eventTopics = {
  factory: topicsOf(factoryEventsAbi),
  vaultCreated: toEventSelector(vaultCreatedEventAbi),
  feedSet: toEventSelector(feedSetEventAbi),
  vault: topicsOf(vaultEventsAbi),
  swap: toEventSelector(swapEventAbi),
  mint: toEventSelector(mintEventAbi),
  answerUpdated: toEventSelector(answerUpdatedEventAbi),
  transfer: toEventSelector(transferEventAbi),
} as const;
