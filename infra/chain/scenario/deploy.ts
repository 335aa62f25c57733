import {
  mockAggregatorAbi,
  mockAggregatorBytecode,
  mockPoolAbi,
  mockPoolBytecode,
  testTokenAbi,
  testTokenBytecode,
  vaultFactoryAbi,
  vaultFactoryBytecode,
} from '@vault-yield/contracts';
import type { Address } from 'viem';
import { poolPriceFromUsd } from './math.js';
import { createDriverClients, type DriverClients, deploy, write } from './wallet.js';

export interface StackToken {
  address: Address;
  symbol: string;
  decimals: number;
  feed: Address;
  /** Initial USD price (the feed's first answer). */
  usd: number;
}

export interface StackPool {
  address: Address;
  venue: string;
  fee: number;
  tickSpacing: number;
}

export interface StackAccounts {
  /** Deployer: token minter, feed updater, pool controller, factory admin. anvil account 0. */
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
  tokens: { weth: StackToken; usdc: StackToken; rwd: StackToken };
  /** Pool token order, as Uniswap v3 sorts it: token0 is the lower address of WETH and USDC. */
  token0: StackToken;
  token1: StackToken;
  /** WETH/USDC pools: uniswap-v3 fee 500 (spacing 10), uniswap-v3 fee 3000 (spacing 60),
   *  aerodrome-slipstream fee 400 (spacing 50). */
  pools: StackPool[];
  factory: Address;
  /** Block the factory was deployed in (VaultFactory.deploymentBlock): the indexer's start. */
  deploymentBlock: bigint;
  /** viem clients the driver uses (anvil signs for its unlocked accounts). */
  clients: DriverClients;
}

const POOLS = [
  { venue: 'uniswap-v3', fee: 500, tickSpacing: 10 },
  { venue: 'uniswap-v3', fee: 3000, tickSpacing: 60 },
  { venue: 'aerodrome-slipstream', fee: 400, tickSpacing: 50 },
] as const;

/** USD price → 8-decimal Chainlink answer. */
export function toAnswer(usd: number): bigint {
  return BigInt(Math.round(usd * 1e8));
}

/**
 * Deploys the reference stack on a fresh dev chain: tokens (WETH 18, USDC 6, RWD 18), USD feeds
 * (3000, 1, 0.5), three WETH/USDC pools at the feed price with a large inventory (to pay fees,
 * rewards and price-moved withdrawals), and the factory with every feed registered.
 */
export async function deployReferenceStack(rpcUrl: string): Promise<ReferenceStack> {
  const c = await createDriverClients(rpcUrl);
  const [deployer, agent, guardian, feeCollector, treasury, ...owners] = c.accounts;
  if (!deployer || !agent || !guardian || !feeCollector || !treasury || owners.length === 0) {
    throw new Error(`need ≥ 6 unlocked accounts, node has ${c.accounts.length}`);
  }

  const token = async (name: string, symbol: string, decimals: number, usd: number): Promise<StackToken> => {
    const address = await deploy(c, deployer, testTokenAbi, testTokenBytecode, [
      name,
      symbol,
      decimals,
      deployer,
    ]);
    const feed = await deploy(c, deployer, mockAggregatorAbi, mockAggregatorBytecode, [
      `${symbol} / USD`,
      toAnswer(usd),
    ]);
    return { address, symbol, decimals, feed, usd };
  };
  const weth = await token('Wrapped Ether', 'WETH', 18, 3000);
  const usdc = await token('USD Coin', 'USDC', 6, 1);
  const rwd = await token('Reward Token', 'RWD', 18, 0.5);
  const [token0, token1] = weth.address < usdc.address ? [weth, usdc] : [usdc, weth];

  const factory = await deploy(c, deployer, vaultFactoryAbi, vaultFactoryBytecode, [guardian, feeCollector]);
  for (const t of [weth, usdc, rwd]) {
    await write(c, deployer, factory, vaultFactoryAbi, 'setFeed', [t.address, t.feed]);
  }

  const price = poolPriceFromUsd(token0.usd, token1.usd, token0.decimals, token1.decimals);
  const pools: StackPool[] = [];
  for (const p of POOLS) {
    const address = await deploy(c, deployer, mockPoolAbi, mockPoolBytecode, [
      token0.address,
      token1.address,
      p.fee,
      p.tickSpacing,
      p.venue,
      price.sqrtPriceX96,
      price.tick,
    ]);
    pools.push({ address, ...p });
    // Inventory: the mock pays fees, rewards and price-moved withdrawals from it.
    for (const [t, whole] of [
      [weth, 1_000_000n],
      [usdc, 10_000_000_000n],
      [rwd, 1_000_000_000n],
    ] as const) {
      await write(c, deployer, t.address, testTokenAbi, 'mint', [address, whole * 10n ** BigInt(t.decimals)]);
    }
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
    tokens: { weth, usdc, rwd },
    token0,
    token1,
    pools,
    factory,
    deploymentBlock,
    clients: c,
  };
}
