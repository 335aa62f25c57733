import type {
  Chain,
  EquityPoint,
  ErrorBody,
  ErrorCode,
  Health,
  LedgerRow,
  Ready,
  Snapshot,
  Strategy,
  UniverseAsset,
  UniversePair,
  VaultSummary,
} from '@vault-yield/client';

/**
 * One example answer per operation, shown in /openapi.json and /docs. Typed by the client's
 * types and checked against the response schemas (examples.test.ts) and by `redocly lint`
 * (no-invalid-media-type-examples), so an example never drifts from what is served.
 */

const VAULT = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
const OWNER = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const WETH = '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512';
const USDC = '0x9fe46736679d2d9a65f0992f6d0cd75fb0bf1d4f';
const POOL = '0xcf7ed3acca5a467e9e704c703e8d87f634fb0fc9';
const ARB = '0xdc64a140aa3e981100a9beca4e685f962f0cf6c9';
const TX = '0x3f1e4a0c1ab0a5d4ad0f6a59f3cf2d9b7f8f2f1c6f1e2d3c4b5a69788796a5b4';
const BLOCK = '0x8a5f0d2b6f1c4e3a29b7d8c6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6';
const CHAIN = 8453;
const VAULT_ID = `eip155:${CHAIN}:${VAULT}`;
const TS = 1_735_689_600_000; // 2025-01-01T00:00:00Z
/** The vault of the live stream's example. */
export const streamVault = VAULT;
export const streamChain = CHAIN;
export const streamVaultId = VAULT_ID;

export const snapshotExample: Snapshot = {
  id: VAULT_ID,
  chainId: CHAIN,
  vault: VAULT,
  owner: OWNER,
  status: 'earning',
  strategy: 'core-eth-usdc',
  valueUsd: 10_412.5,
  capitalInUsd: 10_000,
  capitalOutUsd: 0,
  netUsd: 412.5,
  strategyDeltaUsd: 301.25,
  marketDeltaUsd: 111.25,
  positions: [
    {
      id: '1',
      pool: { a: 'WETH', b: 'USDC', venue: 'uniswap-v3', feeTier: 3000 },
      range: { lower: 3100, upper: 3900, current: 3412.75 },
      inRange: true,
      pendingRewardsUsd: 4.2,
      uncollectedFeesUsd: 12.8,
      timeInRange: { share: 0.874306, inRangeMs: 1_511_001_000, openMs: 1_728_234_000 },
    },
  ],
  fees: { contributedUsd: 10_000, withdrawnUsd: 0, taxedUsd: 0, highWaterUsd: 10_000 },
  suspension: null,
  updatedAt: TS,
  blockNumber: 1842,
  pendingRewardsUsd: 4.2,
  uncollectedFeesUsd: 12.8,
  stalePrices: [],
  lp: {
    hold: { valueUsd: 10_119.13, leadUsd: 293.37 },
    tradingFees: {
      earnedUsd: 150.3,
      uncollectedUsd: 12.8,
      apr: 0.182342,
      tokens: [
        { token: USDC, symbol: 'USDC', earned: '78.91', collected: '71.23', uncollected: '7.68' },
        { token: WETH, symbol: 'WETH', earned: '0.0187', collected: '0.0172', uncollected: '0.0015' },
      ],
    },
    rewards: {
      earnedUsd: 12.6,
      claimedUsd: 8.4,
      pendingUsd: 4.2,
      apr: 0.015287,
      tokens: [{ token: ARB, symbol: 'ARB', claimed: '10.5', pending: '5.25' }],
    },
    attribution: {
      tradingFeesUsd: 150.3,
      rewardsUsd: 12.6,
      performanceFeesUsd: 0,
      lossesUsd: 0,
      priceUsd: 249.6,
    },
    divergence: { usd: -38.4, realisedUsd: -11.15, unrealisedUsd: -27.25 },
    timeInRange: { share: 0.912422, inRangeMs: 2_364_998_400, openMs: 2_592_000_000 },
    rebalances: { count: 3, swaps: 2, costUsd: 3.12, swapFeesUsd: 2.5, priceImpactUsd: 0.62 },
    drawdown: { max: 0.0412, current: 0.0031 },
    tokens: [
      { token: USDC, symbol: 'USDC', held: '5637.28', in: '5000', out: '0', pnl: '637.28' },
      { token: ARB, symbol: 'ARB', held: '5.25', in: '0', out: '0', pnl: '5.25' },
      { token: WETH, symbol: 'WETH', held: '1.398', in: '1.5', out: '0', pnl: '-0.102' },
    ],
  },
  behind: null,
};

export const equityExample: EquityPoint[] = [
  {
    chainId: CHAIN,
    ts: TS - 86_400_000,
    blockNumber: 1200,
    valueUsd: 10_000,
    capitalInUsd: 10_000,
    capitalOutUsd: 0,
    holdValueUsd: 10_000,
  },
  {
    chainId: CHAIN,
    ts: TS,
    blockNumber: 1842,
    valueUsd: 10_412.5,
    capitalInUsd: 10_000,
    capitalOutUsd: 0,
    holdValueUsd: 10_119.13,
  },
];

const row = { vault: VAULT, chainId: CHAIN, txHash: TX, blockNumber: 1201, blockHash: BLOCK, ts: TS };
export const ledgerExample: LedgerRow[] = [
  {
    ...row,
    id: `${CHAIN}:${BLOCK}:${TX}:3:${VAULT}`,
    type: 'position.opened',
    txIndex: 0,
    logIndex: 3,
    data: {
      positionId: '1',
      pool: POOL,
      tickLower: -200_820,
      tickUpper: -198_480,
      liquidity: '1517882343751509868544',
      amount0: '1000000000000000000',
      amount1: '3400000000',
    },
    amounts: [
      { field: 'amount0', token: WETH, symbol: 'WETH', amount: '1', valueUsd: 3400 },
      { field: 'amount1', token: USDC, symbol: 'USDC', amount: '3400', valueUsd: 3400 },
    ],
  },
  {
    ...row,
    id: `${CHAIN}:${BLOCK}:${TX}:1:${VAULT}`,
    type: 'deposit',
    txIndex: 0,
    logIndex: 1,
    data: { from: OWNER, token: USDC, amount: '10000000000' },
    amounts: [{ field: 'amount', token: USDC, symbol: 'USDC', amount: '10000', valueUsd: 10_000 }],
  },
];

export const vaultsExample: VaultSummary[] = [
  {
    id: VAULT_ID,
    chainId: CHAIN,
    vault: VAULT,
    owner: OWNER,
    strategy: 'core-eth-usdc',
    status: 'earning',
    valueUsd: 10_412.5,
    netUsd: 412.5,
    createdAt: TS - 86_400_000,
    updatedAt: TS,
  },
];

export const strategiesExample: Strategy[] = [
  {
    id: 'core-eth-usdc',
    name: 'Core ETH/USDC',
    description: 'Concentrated liquidity around the ETH/USDC price, re-centred when it leaves the range.',
    riskNote: 'Impermanent loss when ETH moves far; smart-contract risk of the pools used.',
    pairs: [{ a: 'WETH', b: 'USDC', venues: ['uniswap-v3'] }],
    liveApr: 0.124,
    sigma: 0.31,
    lp: {
      feeApr: 0.186472,
      rewardApr: 0.021305,
      timeInRange: 0.874112,
      rebalancesPerWeek: 1.25,
      divergenceApr: -0.048917,
      maxDrawdown: 0.063204,
    },
  },
];

export const universeExample: UniverseAsset[] = [
  {
    chainId: CHAIN,
    address: WETH,
    symbol: 'WETH',
    name: 'Wrapped Ether',
    category: 'major',
    decimals: 18,
    venues: ['uniswap-v3'],
    liquidityUsd: 2_450_000,
  },
];

export const pairsExample: UniversePair[] = [
  {
    chainId: CHAIN,
    a: 'USDC',
    b: 'WETH',
    tokenA: USDC,
    tokenB: WETH,
    venues: ['uniswap-v3'],
    tvlUsd: 4_900_000,
    emissions: true,
  },
];

export const chainsExample: Chain[] = [
  {
    chainId: 10,
    vaults: 12,
    head: { blockNumber: 131_402_220, blockTime: TS + 2_000 },
    checkpoint: { blockNumber: 131_402_219, blockTime: TS, updatedAt: TS + 900 },
    folded: { blockNumber: 131_402_205, blockTime: TS - 28_000 },
    lag: { blocks: 1, seconds: 3 },
    foldedLag: { blocks: 14, seconds: 28 },
  },
  {
    chainId: CHAIN,
    vaults: 40,
    head: { blockNumber: 24_310_118, blockTime: TS },
    checkpoint: { blockNumber: 24_310_118, blockTime: TS, updatedAt: TS + 700 },
    folded: { blockNumber: 24_310_118, blockTime: TS },
    lag: { blocks: 0, seconds: 2 },
    foldedLag: { blocks: 0, seconds: 0 },
  },
];

/** A bare address that is a vault on two chains. */
export const ambiguousExample: ErrorBody = {
  error: {
    code: 'ambiguous_vault',
    message: `${VAULT} is a vault on several chains: name one by its id (eip155:10:${VAULT}, ${VAULT_ID})`,
    candidates: [`eip155:10:${VAULT}`, VAULT_ID],
  },
};

export const healthExample: Health = { status: 'ok' };
export const readyExample: Ready = {
  status: 'ready',
  schema: 'vault_yield',
  migration: 16,
  deadLetters: 0,
  vaultsBehind: 0,
  lag: { records: 12, blocks: 1, seconds: 2, foldedBlock: 19_204_117, headBlock: 19_204_118, chainId: 1 },
};

export const metricsExample = `# HELP http_requests_total HTTP requests served
# TYPE http_requests_total counter
http_requests_total{route="/v1/vault/:vault/snapshot",status="200"} 42
`;

export const openapiExample = {
  openapi: '3.1.0',
  info: { title: 'Vault Yield Service — read API', version: '1.0.0' },
  paths: {},
};

export const docsExample = '<!doctype html><html lang="en"><head><title>API reference</title></head>…</html>';

/** The error body with a code and a message as the reader writes them. */
export const errorExample = (code: ErrorCode, message: string): ErrorBody => ({ error: { code, message } });
