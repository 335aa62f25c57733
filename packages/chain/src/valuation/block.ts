import {
  feeGrowthInside,
  type Holdings,
  owedTokens,
  type PoolContext,
  type TokenContext,
  type ValuationContext,
} from '@vault-yield/domain';
import { type Address, encodePacked, type Hash, keccak256, parseAbi, zeroAddress } from 'viem';
import type { ChainClient } from '../client/index.js';
import { formatScaled } from './decimal.js';

/**
 * The chain's truth for many vaults at one block: balances, live positions with what the pool
 * owes them (the pool's own fee-growth formula), pending rewards, feed prices with their age,
 * pool slot0 — read with deployless multicalls at that block, one round trip in the usual case.
 *
 * Reads whose inputs are themselves chain state (a token's feed, a vault's position ranges) are
 * made with the inputs last seen and checked in the same round: when the chain says otherwise
 * (a FeedSet, a new range) a second round reads with what the chain said, so the result never
 * depends on the caches.
 */

const erc20Abi = parseAbi(['function balanceOf(address) view returns (uint256)']);
const vaultAbi = parseAbi([
  'function pendingRewards() view returns (uint256)',
  'function livePositions() view returns (uint256[] ids, int24[] tickLowers, int24[] tickUppers)',
]);
const factoryAbi = parseAbi([
  'function feedOf(address) view returns (address)',
  'function venueOf(address) view returns (string)',
]);
const feedAbi = parseAbi([
  'function decimals() view returns (uint8)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
]);
const poolAbi = parseAbi([
  'function slot0() view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex, uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked)',
  'function feeGrowthGlobal0X128() view returns (uint256)',
  'function feeGrowthGlobal1X128() view returns (uint256)',
  'function positions(bytes32) view returns (uint128 liquidity, uint256 feeGrowthInside0LastX128, uint256 feeGrowthInside1LastX128, uint128 tokensOwed0, uint128 tokensOwed1)',
  'function ticks(int24) view returns (uint128 liquidityGross, int128 liquidityNet, uint256 feeGrowthOutside0X128, uint256 feeGrowthOutside1X128, int56 tickCumulativeOutside, uint160 secondsPerLiquidityOutsideX128, uint32 secondsOutside, bool initialized)',
  'function fee() view returns (uint24)',
  'function token0() view returns (address)',
  'function token1() view returns (address)',
]);
const tokenMetaAbi = parseAbi([
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
]);

export class BlockValuationError extends Error {
  override name = 'BlockValuationError';
}

/** The addresses a vault is valued with (its immutables). */
export interface ValuedVault {
  vault: Address;
  token0: Address;
  token1: Address;
  rewardToken: Address;
  pool: Address;
}

export interface BlockValuatorConfig {
  /** The VaultFactory: feedOf(token) and venueOf(pool) registries. */
  factory: Address;
  /** Heartbeat (seconds) of a feed: older than this its price is stale. */
  heartbeatOf: (feed: Address) => number;
  /** Calls per deployless multicall (initcode ≤ 48 KiB, returned code ≤ 24 KiB). Default 100. */
  callsPerMulticall?: number;
  /** Multicalls of one read in flight at once (default 4). */
  multicallsInFlight?: number;
}

export interface BlockValuator {
  /**
   * Contexts by vault (lowercase), each the vault's state after `block`. With `blockHash` the
   * reads name the block by hash (EIP-1898): a node without that block refuses them ('behind')
   * instead of answering from another one.
   */
  read(
    block: number,
    vaults: readonly ValuedVault[],
    blockHash?: Hash,
  ): Promise<Map<Address, ValuationContext>>;
  /** eth_calls made so far (each one multicall). */
  readonly calls: number;
}

type Call = { address: Address; abi: readonly unknown[]; functionName: string; args?: readonly unknown[] };
type Range = { id: bigint; tickLower: number; tickUpper: number };

const lower = (a: string) => a.toLowerCase() as Address;
const rangeKey = (pool: Address, owner: Address, r: { tickLower: number; tickUpper: number }) =>
  `${pool}:${owner}:${r.tickLower}:${r.tickUpper}`;
const positionKey = (owner: Address, tickLower: number, tickUpper: number) =>
  keccak256(encodePacked(['address', 'int24', 'int24'], [owner, tickLower, tickUpper]));

export function createBlockValuator(client: ChainClient, config: BlockValuatorConfig): BlockValuator {
  const perCall = config.callsPerMulticall ?? 100;
  const inFlight = config.multicallsInFlight ?? 4;
  let calls = 0;
  /** Immutable facts, read once (and at any block: they never change). */
  const tokenMeta = new Map<Address, Promise<{ symbol: string; decimals: number }>>();
  const feedDecimals = new Map<Address, Promise<number>>();
  const poolMeta = new Map<
    Address,
    Promise<{ fee: number; token0: Address; token1: Address; venue: string }>
  >();
  /** Last seen chain state used as inputs (checked every read). */
  const feedOfToken = new Map<Address, Address>();
  const rangesOfVault = new Map<Address, Range[]>();

  /** Runs calls at a block in multicalls of `perCall`, in parallel; throws on any failed call. */
  /**
   * Runs calls at a block in multicalls of `perCall`, at most `inFlight` at once (each carries the
   * Multicall3 creation code and its calls: a block creating hundreds of vaults must not become one
   * multi-megabyte JSON-RPC batch, which nodes refuse); throws on any failed call.
   */
  const run = async (block: bigint, list: Call[], blockHash?: Hash): Promise<unknown[]> => {
    const at = blockHash ? { blockHash } : { blockNumber: block };
    const out: unknown[] = new Array(list.length);
    const starts: number[] = [];
    for (let start = 0; start < list.length; start += perCall) starts.push(start);
    let next = 0;
    const one = async (start: number) => {
      const slice = list.slice(start, start + perCall);
      calls++;
      const results = (await client.multicall({
        contracts: slice as never,
        ...at,
        allowFailure: true,
        deployless: true,
        batchSize: slice.length * 4 + 1,
      })) as readonly { status: string; result?: unknown; error?: unknown }[];
      results.forEach((r, j) => {
        if (r.status === 'failure') {
          const c = slice[j]!;
          // The cause keeps the RPC error (a time-out, 429, a node behind the block) classifiable.
          throw new BlockValuationError(
            `${c.functionName} on ${c.address} at block ${block} failed: ${(r.error as Error).message.split('\n')[0]}`,
            { cause: r.error },
          );
        }
        out[start + j] = r.result;
      });
    };
    const worker = async () => {
      while (next < starts.length) await one(starts[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(inFlight, starts.length) }, worker));
    return out;
  };

  const once = <K, V>(map: Map<K, Promise<V>>, key: K, make: () => Promise<V>): Promise<V> => {
    let p = map.get(key);
    if (!p) {
      p = make();
      p.catch(() => map.delete(key));
      map.set(key, p);
    }
    return p;
  };
  const metaOf = (token: Address) =>
    once(tokenMeta, token, async () => {
      const [symbol, decimals] = await Promise.all([
        client.readContract({ address: token, abi: tokenMetaAbi, functionName: 'symbol' }),
        client.readContract({ address: token, abi: tokenMetaAbi, functionName: 'decimals' }),
      ]);
      return { symbol, decimals: Number(decimals) };
    });
  const decimalsOfFeed = (feed: Address) =>
    once(feedDecimals, feed, async () =>
      Number(await client.readContract({ address: feed, abi: feedAbi, functionName: 'decimals' })),
    );
  const poolOf = (pool: Address) =>
    once(poolMeta, pool, async () => {
      const [fee, token0, token1, venue] = await Promise.all([
        client.readContract({ address: pool, abi: poolAbi, functionName: 'fee' }),
        client.readContract({ address: pool, abi: poolAbi, functionName: 'token0' }),
        client.readContract({ address: pool, abi: poolAbi, functionName: 'token1' }),
        client.readContract({
          address: config.factory,
          abi: factoryAbi,
          functionName: 'venueOf',
          args: [pool],
        }),
      ]);
      if (!venue) throw new BlockValuationError(`pool ${pool} has no venue in the factory's registry`);
      return { fee: Number(fee), token0: lower(token0), token1: lower(token1), venue };
    });

  const tokensOf = (v: ValuedVault): Address[] => {
    const list = [lower(v.token0), lower(v.token1)];
    if (!list.includes(lower(v.rewardToken))) list.push(lower(v.rewardToken));
    return list;
  };

  const read = async (blockNumber: number, vaults: readonly ValuedVault[], blockHash?: Hash) => {
    const block = BigInt(blockNumber);
    const tokens = [...new Set(vaults.flatMap(tokensOf))].sort();
    const pools = [...new Set(vaults.map((v) => lower(v.pool)))].sort();
    const [metas, poolMetas] = await Promise.all([
      Promise.all(tokens.map(metaOf)),
      Promise.all(pools.map(poolOf)),
    ]);

    // ---- round 1: everything, with the feeds and ranges last seen
    const calls1: Call[] = [];
    const at = <T>(c: Call): (() => T) => {
      const i = calls1.push(c) - 1;
      return () => results1[i] as T;
    };
    const ask = (list: Call[], results: () => unknown[]) => (c: Call) => {
      const i = list.push(c) - 1;
      return <T>() => results()[i] as T;
    };
    let results1: unknown[] = [];
    const feedOf = tokens.map((t) =>
      at<Address>({ address: config.factory, abi: factoryAbi, functionName: 'feedOf', args: [t] }),
    );
    const roundOf = tokens.map((t) => {
      const feed = feedOfToken.get(t);
      return feed
        ? {
            feed,
            get: at<readonly bigint[]>({ address: feed, abi: feedAbi, functionName: 'latestRoundData' }),
          }
        : null;
    });
    const poolReads = pools.map((p) => ({
      slot0: at<readonly [bigint, number]>({ address: p, abi: poolAbi, functionName: 'slot0' }),
      g0: at<bigint>({ address: p, abi: poolAbi, functionName: 'feeGrowthGlobal0X128' }),
      g1: at<bigint>({ address: p, abi: poolAbi, functionName: 'feeGrowthGlobal1X128' }),
    }));
    const tickReads = new Map<string, () => readonly bigint[]>();
    const positionReads = new Map<string, () => readonly bigint[]>();
    const addRangeReads = (add: (c: Call) => () => unknown, pool: Address, owner: Address, r: Range) => {
      const key = rangeKey(pool, owner, r);
      if (positionReads.has(key)) return;
      positionReads.set(
        key,
        add({
          address: pool,
          abi: poolAbi,
          functionName: 'positions',
          args: [positionKey(owner, r.tickLower, r.tickUpper)],
        }) as () => readonly bigint[],
      );
      for (const t of [r.tickLower, r.tickUpper]) {
        const tk = `${pool}:${t}`;
        if (!tickReads.has(tk))
          tickReads.set(
            tk,
            add({ address: pool, abi: poolAbi, functionName: 'ticks', args: [t] }) as () => readonly bigint[],
          );
      }
    };
    const vaultReads = vaults.map((v) => {
      const vault = lower(v.vault);
      const pool = lower(v.pool);
      for (const r of rangesOfVault.get(vault) ?? []) addRangeReads(at, pool, vault, r);
      return {
        balances: tokensOf(v).map((t) =>
          at<bigint>({ address: t, abi: erc20Abi, functionName: 'balanceOf', args: [vault] }),
        ),
        pending: at<bigint>({ address: vault, abi: vaultAbi, functionName: 'pendingRewards' }),
        live: at<readonly [readonly bigint[], readonly number[], readonly number[]]>({
          address: vault,
          abi: vaultAbi,
          functionName: 'livePositions',
        }),
      };
    });
    results1 = await run(block, calls1, blockHash);

    // ---- round 2: what the chain said differs from what we assumed
    const calls2: Call[] = [];
    let results2: unknown[] = [];
    const add2 = ask(calls2, () => results2);
    const rounds = tokens.map((t, i) => {
      const feed = lower(feedOf[i]!());
      if (feed === zeroAddress)
        throw new BlockValuationError(`no USD feed registered for token ${t} at block ${block}`);
      feedOfToken.set(t, feed);
      const r1 = roundOf[i];
      if (r1 && r1.feed === feed) return { feed, get: r1.get };
      return {
        feed,
        get: add2({
          address: feed,
          abi: feedAbi,
          functionName: 'latestRoundData',
        }) as () => readonly bigint[],
      };
    });
    const ranges = vaultReads.map((r, i) => {
      const v = vaults[i]!;
      const [ids, lowers, uppers] = r.live();
      const list: Range[] = ids.map((id, j) => ({
        id,
        tickLower: Number(lowers[j]),
        tickUpper: Number(uppers[j]),
      }));
      rangesOfVault.set(lower(v.vault), list);
      for (const range of list)
        addRangeReads(add2 as (c: Call) => () => unknown, lower(v.pool), lower(v.vault), range);
      return list;
    });
    if (calls2.length > 0) results2 = await run(block, calls2, blockHash);

    // ---- assemble
    const feedDecs = await Promise.all(rounds.map((r) => decimalsOfFeed(r.feed)));
    const tokenCtx = new Map<Address, TokenContext>();
    tokens.forEach((t, i) => {
      const round = rounds[i]!.get();
      const answer = round[1]!;
      if (answer < 0n)
        throw new BlockValuationError(`feed ${rounds[i]!.feed} answered ${answer} (< 0) at block ${block}`);
      tokenCtx.set(t, {
        address: t,
        symbol: metas[i]!.symbol,
        decimals: metas[i]!.decimals,
        priceUsd: formatScaled(answer, feedDecs[i]!),
        feed: rounds[i]!.feed,
        priceUpdatedAt: Number(round[3]!),
        heartbeat: config.heartbeatOf(rounds[i]!.feed),
      });
    });
    const poolCtx = new Map<Address, PoolContext & { g0: bigint; g1: bigint }>();
    pools.forEach((p, i) => {
      const m = poolMetas[i]!;
      const [sqrtPriceX96, tick] = poolReads[i]!.slot0();
      poolCtx.set(p, {
        address: p,
        venue: m.venue,
        feeTier: m.fee,
        sqrtPriceX96: sqrtPriceX96.toString(),
        tick: Number(tick),
        token0: m.token0,
        token1: m.token1,
        g0: poolReads[i]!.g0(),
        g1: poolReads[i]!.g1(),
      });
    });

    const out = new Map<Address, ValuationContext>();
    vaults.forEach((v, i) => {
      const vault = lower(v.vault);
      const pool = poolCtx.get(lower(v.pool))!;
      const list = tokensOf(v);
      const reads = vaultReads[i]!;
      const holdings: Holdings = { balances: [], positions: [], pendingRewards: [] };
      list.forEach((t, j) => {
        const amount = reads.balances[j]!();
        if (amount > 0n) holdings.balances.push({ token: t, amount: amount.toString() });
      });
      const pending = reads.pending();
      if (pending > 0n)
        holdings.pendingRewards.push({ token: lower(v.rewardToken), amount: pending.toString() });
      for (const r of ranges[i]!) {
        const key = rangeKey(pool.address, vault, r);
        const [liquidity, last0, last1, owed0, owed1] = positionReads.get(key)!();
        const lo = tickReads.get(`${pool.address}:${r.tickLower}`)!();
        const up = tickReads.get(`${pool.address}:${r.tickUpper}`)!();
        const [in0, in1] = feeGrowthInside(
          pool.tick,
          r.tickLower,
          r.tickUpper,
          { feeGrowthOutside0X128: lo[2]!, feeGrowthOutside1X128: lo[3]! },
          { feeGrowthOutside0X128: up[2]!, feeGrowthOutside1X128: up[3]! },
          pool.g0,
          pool.g1,
        );
        const [o0, o1] = owedTokens(
          {
            liquidity: liquidity!,
            feeGrowthInside0LastX128: last0!,
            feeGrowthInside1LastX128: last1!,
            tokensOwed0: owed0!,
            tokensOwed1: owed1!,
          },
          in0,
          in1,
        );
        holdings.positions.push({
          id: r.id.toString(),
          pool: pool.address,
          tickLower: r.tickLower,
          tickUpper: r.tickUpper,
          liquidity: liquidity!.toString(),
          owed0: o0.toString(),
          owed1: o1.toString(),
        });
      }
      const { g0: _g0, g1: _g1, ...poolContext } = pool;
      out.set(vault, {
        tokens: list.map((t) => tokenCtx.get(t)!),
        pools: [poolContext],
        holdings,
      });
    });
    return out;
  };

  return {
    read,
    get calls() {
      return calls;
    },
  };
}
