import {
  mockAggregatorAbi,
  mockAggregatorBytecode,
  rewardsGaugeAbi,
  rewardsGaugeBytecode,
  swapperAbi,
  swapperBytecode,
  testTokenAbi,
  testTokenBytecode,
  uniswapV3FactoryAbi,
  uniswapV3FactoryBytecode,
  uniswapV3PoolAbi,
  vaultFactoryAbi,
  vaultFactoryBytecode,
} from '@vault-yield/contracts';
import type { Abi, Address } from 'viem';
import {
  getLiquidityForAmounts,
  getSqrtRatioAtTick,
  MAX_TICK,
  MIN_TICK,
  sqrtPriceX96FromAnswers,
} from './math.js';
import { createDriverClients, type DriverClients, deploy, write } from './wallet.js';

export interface StackToken {
  address: Address;
  symbol: string;
  decimals: number;
  feed: Address;
  /** Current USD price (the feed's latest answer, as set by the driver). */
  usd: number;
}

export interface StackPool {
  /** A real UniswapV3Pool, created by the published UniswapV3Factory. */
  address: Address;
  venue: 'uniswap-v3';
  fee: number;
  tickSpacing: number;
  /** Pool token order (by address, as Uniswap v3 sorts it). */
  token0: StackToken;
  token1: StackToken;
}

export interface StackAccounts {
  /** Deployer: token minter, feed updater, factories' admin/owner. anvil account 0. */
  deployer: Address;
  /** The vaults' agent. anvil account 1. */
  agent: Address;
  /** Factory guardian (suspend/resume). anvil account 2. */
  guardian: Address;
  /** Factory fee collector (charges performance fees). anvil account 3. */
  feeCollector: Address;
  /** Receives performance fees. anvil account 4. */
  treasury: Address;
  /** Vault owners: anvil accounts 5..9. */
  owners: Address[];
}

export interface ReferenceStack {
  rpcUrl: string;
  chainId: number;
  accounts: StackAccounts;
  /** WETH (18 dec), USDC (6), ARB (18), RWD (18, the reward token); addresses chosen so that
   *  WETH < USDC < ARB. */
  tokens: { weth: StackToken; usdc: StackToken; arb: StackToken; rwd: StackToken };
  /** [0] WETH/USDC 0.05% (spacing 10), [1] WETH/USDC 0.3% (60): WETH is token0;
   *  [2] USDC/ARB 0.3% (60): USDC is token0. */
  pools: StackPool[];
  /** VaultFactory (the service's registry of vaults, feeds, venues). */
  factory: Address;
  /** The published UniswapV3Factory. */
  uniswapFactory: Address;
  /** RewardsGauge paying claimed rewards (funded with RWD). */
  gauge: Address;
  /** Swapper: trades against the pools and owns their background liquidity. */
  swapper: Address;
  /** Block the factory was deployed in (VaultFactory.deploymentBlock): the indexer's start. */
  deploymentBlock: bigint;
  /** viem clients the driver uses (anvil signs for its unlocked accounts). */
  clients: DriverClients;
}

/** USD price → 8-decimal Chainlink answer. */
export function toAnswer(usd: number): bigint {
  return BigInt(Math.round(usd * 1e8));
}

/** The pool's sqrtPriceX96 at the tokens' current feed prices. */
export function targetSqrtPrice(pool: StackPool): bigint {
  return sqrtPriceX96FromAnswers(
    toAnswer(pool.token0.usd),
    toAnswer(pool.token1.usd),
    pool.token0.decimals,
    pool.token1.decimals,
  );
}

/** Background liquidity per pool, in USD per side (full range, owned by the swapper). */
const BACKGROUND_USD_PER_SIDE = 1_000_000;
/** Swapper inventory: whole tokens of each kind (pays swaps and background liquidity). */
const SWAPPER_WHOLE = 1_000_000_000n;

/**
 * Deploys the reference stack on a fresh dev chain: tokens (WETH 18, USDC 6, ARB 18, RWD 18) with
 * USD feeds (3000, 1, 0.8, 0.5), the published UniswapV3Factory and three pools created by it and
 * initialized at the feed price, full-range background liquidity from the swapper, the
 * VaultFactory with every feed and venue registered, and a funded RewardsGauge.
 * Deterministic on a fresh anvil: token addresses come from the deployer's nonce; a token whose
 * address falls on the wrong side is deployed again (same sequence every run).
 */
export async function deployReferenceStack(rpcUrl: string): Promise<ReferenceStack> {
  const c = await createDriverClients(rpcUrl);
  const [deployer, agent, guardian, feeCollector, treasury, ...owners] = c.accounts;
  if (!deployer || !agent || !guardian || !feeCollector || !treasury || owners.length === 0) {
    throw new Error(`need ≥ 6 unlocked accounts, node has ${c.accounts.length}`);
  }
  const dep = (abi: Abi, bytecode: `0x${string}`, args: readonly unknown[]) =>
    deploy(c, deployer, abi, bytecode, args);

  /** Deploys a token until `ok(address)` holds, then its feed. */
  const token = async (
    name: string,
    symbol: string,
    decimals: number,
    usd: number,
    ok: (a: Address) => boolean = () => true,
  ): Promise<StackToken> => {
    let address: Address;
    for (let tries = 0; ; tries++) {
      if (tries > 32) throw new Error(`could not place ${symbol} in the token order`);
      address = await dep(testTokenAbi, testTokenBytecode, [name, symbol, decimals, deployer]);
      if (ok(address)) break;
    }
    const feed = await dep(mockAggregatorAbi, mockAggregatorBytecode, [`${symbol} / USD`, toAnswer(usd)]);
    return { address, symbol, decimals, feed, usd };
  };
  const usdc = await token('USD Coin', 'USDC', 6, 1);
  const weth = await token('Wrapped Ether', 'WETH', 18, 3000, (a) => a < usdc.address);
  const arb = await token('Arbitrum', 'ARB', 18, 0.8, (a) => a > usdc.address);
  const rwd = await token('Reward Token', 'RWD', 18, 0.5);

  const factory = await dep(vaultFactoryAbi, vaultFactoryBytecode, [guardian, feeCollector]);
  for (const t of [weth, usdc, arb, rwd]) {
    await write(c, deployer, factory, vaultFactoryAbi, 'setFeed', [t.address, t.feed]);
  }
  const gauge = await dep(rewardsGaugeAbi, rewardsGaugeBytecode, [factory]);
  await write(c, deployer, factory, vaultFactoryAbi, 'setGauge', [gauge]);
  await write(c, deployer, rwd.address, testTokenAbi, 'mint', [gauge, SWAPPER_WHOLE * 10n ** 18n]);

  const swapper = await dep(swapperAbi, swapperBytecode, []);
  for (const t of [weth, usdc, arb]) {
    await write(c, deployer, t.address, testTokenAbi, 'mint', [
      swapper,
      SWAPPER_WHOLE * 10n ** BigInt(t.decimals),
    ]);
  }

  const uniswapFactory = await dep(uniswapV3FactoryAbi as Abi, uniswapV3FactoryBytecode, []);
  const specs = [
    { token0: weth, token1: usdc, fee: 500 },
    { token0: weth, token1: usdc, fee: 3000 },
    { token0: usdc, token1: arb, fee: 3000 },
  ];
  const pools: StackPool[] = [];
  for (const s of specs) {
    await write(c, deployer, uniswapFactory, uniswapV3FactoryAbi, 'createPool', [
      s.token0.address,
      s.token1.address,
      s.fee,
    ]);
    const address = (
      await c.publicClient.readContract({
        address: uniswapFactory,
        abi: uniswapV3FactoryAbi,
        functionName: 'getPool',
        args: [s.token0.address, s.token1.address, s.fee],
      })
    ).toLowerCase() as Address;
    const tickSpacing = await c.publicClient.readContract({
      address,
      abi: uniswapV3PoolAbi,
      functionName: 'tickSpacing',
    });
    const pool: StackPool = { address, venue: 'uniswap-v3', tickSpacing, ...s };
    const sqrtP = targetSqrtPrice(pool);
    await write(c, deployer, address, uniswapV3PoolAbi, 'initialize', [sqrtP]);
    await write(c, deployer, factory, vaultFactoryAbi, 'setVenue', [address, pool.venue]);
    const lower = Math.ceil(MIN_TICK / tickSpacing) * tickSpacing;
    const upper = Math.floor(MAX_TICK / tickSpacing) * tickSpacing;
    const whole = (t: StackToken) =>
      BigInt(Math.round(BACKGROUND_USD_PER_SIDE / t.usd)) * 10n ** BigInt(t.decimals);
    const liquidity = getLiquidityForAmounts(
      sqrtP,
      getSqrtRatioAtTick(lower),
      getSqrtRatioAtTick(upper),
      whole(s.token0),
      whole(s.token1),
    );
    await write(c, deployer, swapper, swapperAbi, 'mintLiquidity', [address, lower, upper, liquidity]);
    pools.push(pool);
  }

  const deploymentBlock = await c.publicClient.readContract({
    address: factory,
    abi: vaultFactoryAbi,
    functionName: 'deploymentBlock',
  });
  return {
    rpcUrl,
    chainId: c.chain.id,
    accounts: { deployer, agent, guardian, feeCollector, treasury, owners },
    tokens: { weth, usdc, arb, rwd },
    pools,
    factory,
    uniswapFactory,
    gauge,
    swapper,
    deploymentBlock,
    clients: c,
  };
}
