/**
 * valueAtHead: a vault's USD value computed straight from chain state by a code path that
 * shares nothing with packages/domain or packages/chain's valuation — the reference the
 * indexer's figures are tested against.
 *   idle      balanceOf(vault) of token0, token1, rewardToken
 *   positions own v3 math (v3-math.ts) at the pool's slot0, for every position the pool holds for
 *             the vault: its live ones, and every range of a Mint in its pool whose owner is the
 *             vault (liquidity minted for it by someone else) that still holds something — each
 *             with the liquidity the pool says the vault owns there
 *   fees      the pool computes them: on an anvil snapshot, impersonate the vault, burn 0
 *             liquidity (open positions), read positions(key).tokensOwed0/1, evm_revert
 *             (valueAtHead); or the same poke in an eth_call with FeeProbe's code at the vault's
 *             address, at any block, mining nothing (valueAt)
 *   rewards   vault.pendingRewards()
 *   prices    latestRoundData / decimals of VaultFactory.feedOf(token)
 * valueUsd = Σ idle·price + Σ (amounts + fees)·price + pendingRewards·price(rewardToken), an exact
 * decimal string. Mutates nothing: the snapshot is always reverted.
 */
import { minedReceipt } from '@vault-yield/devstack/chain';
import {
  type Address,
  encodeFunctionData,
  encodePacked,
  type Hex,
  keccak256,
  type PublicClient,
  parseAbi,
  parseAbiItem,
} from 'viem';
import { feesOwedAt } from './probe.js';
import { positionAmounts } from './v3-math.js';

const vaultAbi = parseAbi([
  'function factory() view returns (address)',
  'function pool() view returns (address)',
  'function token0() view returns (address)',
  'function token1() view returns (address)',
  'function rewardToken() view returns (address)',
  'function pendingRewards() view returns (uint256)',
  'function livePositions() view returns (uint256[] ids, int24[] tickLowers, int24[] tickUppers)',
  'function positions(uint256) view returns (int24 tickLower, int24 tickUpper, uint128 liquidity, bool exists, bool live)',
]);
const poolAbi = parseAbi([
  'function slot0() view returns (uint160 sqrtPriceX96, int24 tick, uint16, uint16, uint16, uint8, bool)',
  'function positions(bytes32 key) view returns (uint128 liquidity, uint256 feeGrowthInside0LastX128, uint256 feeGrowthInside1LastX128, uint128 tokensOwed0, uint128 tokensOwed1)',
  'function burn(int24 tickLower, int24 tickUpper, uint128 amount) returns (uint256 amount0, uint256 amount1)',
]);
const mintEvent = parseAbiItem(
  'event Mint(address sender, address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)',
);
const erc20Abi = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function decimals() view returns (uint8)',
]);
const factoryAbi = parseAbi(['function feedOf(address) view returns (address)']);
const feedAbi = parseAbi([
  'function decimals() view returns (uint8)',
  'function latestRoundData() view returns (uint80, int256 answer, uint256, uint256 updatedAt, uint80)',
]);

export interface TruthPrice {
  feed: Address;
  answer: bigint;
  feedDecimals: number;
  tokenDecimals: number;
}

export interface TruthPosition {
  id: bigint;
  tickLower: number;
  tickUpper: number;
  liquidity: bigint;
  /** Principal at the pool price (own math). */
  amount0: bigint;
  amount1: bigint;
  /** Owed by the pool beyond the principal (uncollected fees), as the pool computes them. */
  fees0: bigint;
  fees1: bigint;
}

export interface TruthValuation {
  blockNumber: bigint;
  /** Exact decimal string. */
  valueUsd: string;
  balances: Record<Address, bigint>;
  positions: TruthPosition[];
  pendingRewards: bigint;
  prices: Record<Address, TruthPrice>;
}

const lower = (a: string) => a.toLowerCase() as Address;

type OwedFn = (
  vault: Address,
  pool: Address,
  positions: { id: bigint; tickLower: number; tickUpper: number; liquidity: bigint }[],
  blockNumber: bigint,
) => Promise<{ fees0: bigint; fees1: bigint }[]>;

/** The value at the head; fees poked on an anvil snapshot (mined, then reverted). */
export async function valueAtHead(client: PublicClient, vault: Address): Promise<TruthValuation> {
  return valueWith(client, vault, await client.getBlockNumber(), (v, pool, ps) =>
    feesOwedByPool(client, v, pool, ps),
  );
}

/**
 * The value at any block (also past ones), mining nothing: fees poked in an eth_call at that
 * block whose code at the vault's address is overridden by FeeProbe (test/chain-truth/probe.ts).
 * Safe to run while an indexer follows the chain.
 */
export async function valueAt(
  client: PublicClient,
  vault: Address,
  blockNumber: bigint,
): Promise<TruthValuation> {
  return valueWith(client, vault, blockNumber, (v, pool, ps, block) =>
    Promise.all(ps.map((p) => feesOwedAt(client, v, pool, p, block))),
  );
}

async function valueWith(
  client: PublicClient,
  vaultAddress: Address,
  blockNumber: bigint,
  owedFn: OwedFn,
): Promise<TruthValuation> {
  const vault = lower(vaultAddress);
  const at = { blockNumber };
  const v = <F extends 'factory' | 'pool' | 'token0' | 'token1' | 'rewardToken' | 'pendingRewards'>(
    functionName: F,
  ) => client.readContract({ address: vault, abi: vaultAbi, functionName, ...at });
  const [factory, pool, token0, token1, rewardToken, pendingRewards, live] = await Promise.all([
    v('factory'),
    v('pool'),
    v('token0'),
    v('token1'),
    v('rewardToken'),
    v('pendingRewards'),
    client.readContract({ address: vault, abi: vaultAbi, functionName: 'livePositions', ...at }),
  ]);
  const tokens = [...new Set([token0, token1, rewardToken].map(lower))];

  const prices: Record<Address, TruthPrice> = {};
  const balances: Record<Address, bigint> = {};
  for (const token of tokens) {
    const feed = lower(
      await client.readContract({
        address: factory,
        abi: factoryAbi,
        functionName: 'feedOf',
        args: [token],
        ...at,
      }),
    );
    const [round, feedDecimals, tokenDecimals, balance] = await Promise.all([
      client.readContract({ address: feed, abi: feedAbi, functionName: 'latestRoundData', ...at }),
      client.readContract({ address: feed, abi: feedAbi, functionName: 'decimals', ...at }),
      client.readContract({ address: token, abi: erc20Abi, functionName: 'decimals', ...at }),
      client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [vault], ...at }),
    ]);
    prices[token] = { feed, answer: round[1], feedDecimals, tokenDecimals };
    balances[token] = balance;
  }

  const [sqrtPriceX96, tick] = await client.readContract({
    address: pool,
    abi: poolAbi,
    functionName: 'slot0',
    ...at,
  });
  // The live positions, then every range minted for the vault in its pool that is no live one.
  const ranges = live[0].map((id, i) => ({ id, tickLower: live[1][i]!, tickUpper: live[2][i]! }));
  const mints = await client.getLogs({
    address: pool,
    event: mintEvent,
    args: { owner: vault },
    fromBlock: 0n,
    toBlock: blockNumber,
  });
  for (const m of mints) {
    const { tickLower, tickUpper } = m.args as { tickLower: number; tickUpper: number };
    if (ranges.some((r) => r.tickLower === tickLower && r.tickUpper === tickUpper)) continue;
    ranges.push({ id: BigInt(keyOf(vault, tickLower, tickUpper)), tickLower, tickUpper });
  }
  // What the pool holds for the vault at each range (a gift into a live range included).
  const held = await Promise.all(
    ranges.map((r) =>
      client.readContract({
        address: pool,
        abi: poolAbi,
        functionName: 'positions',
        args: [keyOf(vault, r.tickLower, r.tickUpper)],
        ...at,
      }),
    ),
  );
  const kept = ranges
    .map((r, i) => ({ ...r, liquidity: held[i]![0], owed: held[i]![3] + held[i]![4] }))
    .filter((r, i) => i < live[0].length || r.liquidity > 0n || r.owed > 0n);
  const owed = await owedFn(vault, pool, kept, blockNumber);
  const positions: TruthPosition[] = kept.map((r, i) => {
    const { amount0, amount1 } = positionAmounts(
      { sqrtPriceX96, tick },
      r.tickLower,
      r.tickUpper,
      r.liquidity,
    );
    return {
      id: r.id,
      tickLower: r.tickLower,
      tickUpper: r.tickUpper,
      liquidity: r.liquidity,
      amount0,
      amount1,
      fees0: owed[i]!.fees0,
      fees1: owed[i]!.fees1,
    };
  });

  // Σ amount·answer / 10^(tokenDecimals + feedDecimals), summed exactly over a common scale.
  const terms: [Address, bigint][] = [
    ...tokens.map((t) => [t, balances[t]!] as [Address, bigint]),
    ...positions.flatMap((p) => [
      [lower(token0), p.amount0 + p.fees0] as [Address, bigint],
      [lower(token1), p.amount1 + p.fees1] as [Address, bigint],
    ]),
    [lower(rewardToken), pendingRewards],
  ];
  const scale = Math.max(...Object.values(prices).map((p) => p.tokenDecimals + p.feedDecimals));
  let total = 0n;
  for (const [token, amount] of terms) {
    const p = prices[token]!;
    total += amount * p.answer * 10n ** BigInt(scale - p.tokenDecimals - p.feedDecimals);
  }
  return { blockNumber, valueUsd: formatExact(total, scale), balances, positions, pendingRewards, prices };
}

/** Makes every probe transaction distinct (see its gas limit). */
let nextProbe = 0;

/** Fees the pool owes each position: poked by a zero-liquidity burn from the vault on a snapshot. */
async function feesOwedByPool(
  client: PublicClient,
  vault: Address,
  pool: Address,
  positions: { id: bigint; tickLower: number; tickUpper: number; liquidity: bigint }[],
): Promise<{ fees0: bigint; fees1: bigint }[]> {
  if (positions.length === 0) return [];
  const rpc = client.request as unknown as (a: { method: string; params: unknown[] }) => Promise<unknown>;
  const snapshot = (await rpc({ method: 'evm_snapshot', params: [] })) as Hex;
  const out: { fees0: bigint; fees1: bigint }[] = [];
  let failure: unknown = null;
  try {
    await rpc({ method: 'anvil_impersonateAccount', params: [vault] });
    await rpc({ method: 'anvil_setBalance', params: [vault, '0x56bc75e2d63100000'] });
    for (const p of positions) {
      if (p.liquidity > 0n) {
        const hash = (await rpc({
          method: 'eth_sendTransaction',
          params: [
            {
              from: vault,
              to: pool,
              data: encodeFunctionData({
                abi: poolAbi,
                functionName: 'burn',
                args: [p.tickLower, p.tickUpper, 0n],
              }),
              // A gas limit of its own: after evm_revert the vault's nonce is the same again, and a
              // probe identical to a reverted one (same hash) is never mined by anvil.
              gas: `0x${(500_000 + nextProbe++).toString(16)}`,
            },
          ],
        })) as Hex;
        const r = await minedReceipt(client, hash);
        if (r.status !== 'success') throw new Error(`zero-liquidity burn of position ${p.id} reverted`);
      }
      const key = keyOf(vault, p.tickLower, p.tickUpper);
      const [, , , tokensOwed0, tokensOwed1] = await client.readContract({
        address: pool,
        abi: poolAbi,
        functionName: 'positions',
        args: [key],
      });
      out.push({ fees0: tokensOwed0, fees1: tokensOwed1 });
    }
  } catch (err) {
    failure = err;
  }
  await rpc({ method: 'anvil_stopImpersonatingAccount', params: [vault] });
  const reverted = await rpc({ method: 'evm_revert', params: [snapshot] });
  if (failure) throw failure;
  if (reverted !== true) throw new Error('evm_revert failed: the chain keeps the probe burns');
  return out;
}

/** A position's key in a v3 pool: keccak256(owner, tickLower, tickUpper). */
const keyOf = (owner: Address, tickLower: number, tickUpper: number): Hex =>
  keccak256(encodePacked(['address', 'int24', 'int24'], [owner, tickLower, tickUpper]));

/** n / 10^scale as an exact decimal string, without trailing zeros. */
export function formatExact(n: bigint, scale: number): string {
  const neg = n < 0n;
  const abs = neg ? -n : n;
  const d = 10n ** BigInt(scale);
  const int = abs / d;
  const frac = (abs % d).toString().padStart(scale, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}
