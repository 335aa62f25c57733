/**
 * The functions the audit calls, as the chain's contracts declare them (the Vault's views, the
 * Uniswap v3 pool's burn/collect/positions, the rewards gauge's pay, ERC-20, the factory's
 * feedOf, Chainlink's AggregatorV3Interface). Written out here, not taken from the indexer's
 * code: the audit shares no reading or valuation code with it.
 */
export const auditVaultAbi = [
  { type: 'function', name: 'pool', stateMutability: 'view', inputs: [], outputs: [{ type: 'address' }] },
  { type: 'function', name: 'token0', stateMutability: 'view', inputs: [], outputs: [{ type: 'address' }] },
  { type: 'function', name: 'token1', stateMutability: 'view', inputs: [], outputs: [{ type: 'address' }] },
  {
    type: 'function',
    name: 'rewardToken',
    stateMutability: 'view',
    inputs: [],
    outputs: [{ type: 'address' }],
  },
  { type: 'function', name: 'gauge', stateMutability: 'view', inputs: [], outputs: [{ type: 'address' }] },
  { type: 'function', name: 'factory', stateMutability: 'view', inputs: [], outputs: [{ type: 'address' }] },
  {
    type: 'function',
    name: 'pendingRewards',
    stateMutability: 'view',
    inputs: [],
    outputs: [{ type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'livePositions',
    stateMutability: 'view',
    inputs: [],
    outputs: [
      { name: 'ids', type: 'uint256[]' },
      { name: 'tickLowers', type: 'int24[]' },
      { name: 'tickUppers', type: 'int24[]' },
    ],
  },
] as const;

export const auditPoolAbi = [
  {
    type: 'function',
    name: 'positions',
    stateMutability: 'view',
    inputs: [{ name: 'key', type: 'bytes32' }],
    outputs: [
      { name: 'liquidity', type: 'uint128' },
      { name: 'feeGrowthInside0LastX128', type: 'uint256' },
      { name: 'feeGrowthInside1LastX128', type: 'uint256' },
      { name: 'tokensOwed0', type: 'uint128' },
      { name: 'tokensOwed1', type: 'uint128' },
    ],
  },
  {
    type: 'function',
    name: 'burn',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'tickLower', type: 'int24' },
      { name: 'tickUpper', type: 'int24' },
      { name: 'amount', type: 'uint128' },
    ],
    outputs: [
      { name: 'amount0', type: 'uint256' },
      { name: 'amount1', type: 'uint256' },
    ],
  },
  {
    type: 'function',
    name: 'collect',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'recipient', type: 'address' },
      { name: 'tickLower', type: 'int24' },
      { name: 'tickUpper', type: 'int24' },
      { name: 'amount0Requested', type: 'uint128' },
      { name: 'amount1Requested', type: 'uint128' },
    ],
    outputs: [
      { name: 'amount0', type: 'uint128' },
      { name: 'amount1', type: 'uint128' },
    ],
  },
] as const;

/** The pool's Mint: a range minted for `owner` (the vault's own, or liquidity someone else minted for it). */
export const auditMintEvent = {
  type: 'event',
  name: 'Mint',
  inputs: [
    { name: 'sender', type: 'address', indexed: false },
    { name: 'owner', type: 'address', indexed: true },
    { name: 'tickLower', type: 'int24', indexed: true },
    { name: 'tickUpper', type: 'int24', indexed: true },
    { name: 'amount', type: 'uint128', indexed: false },
    { name: 'amount0', type: 'uint256', indexed: false },
    { name: 'amount1', type: 'uint256', indexed: false },
  ],
} as const;

export const auditGaugeAbi = [
  {
    type: 'function',
    name: 'pay',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'token', type: 'address' },
      { name: 'amount', type: 'uint256' },
    ],
    outputs: [],
  },
] as const;

export const auditTokenAbi = [
  {
    type: 'function',
    name: 'balanceOf',
    stateMutability: 'view',
    inputs: [{ name: 'who', type: 'address' }],
    outputs: [{ type: 'uint256' }],
  },
  { type: 'function', name: 'decimals', stateMutability: 'view', inputs: [], outputs: [{ type: 'uint8' }] },
] as const;

export const auditFactoryAbi = [
  {
    type: 'function',
    name: 'deploymentBlock',
    stateMutability: 'view',
    inputs: [],
    outputs: [{ type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'feedOf',
    stateMutability: 'view',
    inputs: [{ name: 'token', type: 'address' }],
    outputs: [{ type: 'address' }],
  },
] as const;

export const auditFeedAbi = [
  { type: 'function', name: 'decimals', stateMutability: 'view', inputs: [], outputs: [{ type: 'uint8' }] },
  {
    type: 'function',
    name: 'latestRoundData',
    stateMutability: 'view',
    inputs: [],
    outputs: [
      { name: 'roundId', type: 'uint80' },
      { name: 'answer', type: 'int256' },
      { name: 'startedAt', type: 'uint256' },
      { name: 'updatedAt', type: 'uint256' },
      { name: 'answeredInRound', type: 'uint80' },
    ],
  },
] as const;
