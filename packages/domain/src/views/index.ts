import { z } from 'zod';

/**
 * The shapes the reader serves (seed §2), as zod schemas: the projector writes rows that parse
 * with them, the reader validates and documents its responses with them (OpenAPI is generated
 * from these). Addresses are lowercase; timestamps are Unix milliseconds (integers); USD amounts
 * are JSON numbers rounded to 6 decimals at the edge (the fold keeps exact values inside).
 */
const addressOut = z
  .string()
  .regex(/^0x[0-9a-f]{40}$/)
  .describe('lowercase 0x address');
const usd = z.number().describe('US dollars');
const unixMs = z.number().int().nonnegative().describe('Unix time in milliseconds');

export const vaultStatus = z
  .enum(['idle', 'aiming', 'earning', 'attention', 'exiting', 'suspended'])
  .describe('Vault status; see the transition table in the API description');
export type VaultStatus = z.infer<typeof vaultStatus>;

export const positionView = z.object({
  id: z.string().describe('position id: the onchain uint256 as a decimal string'),
  pool: z.object({
    a: z.string().describe('symbol of token0'),
    b: z.string().describe('symbol of token1'),
    venue: z.string(),
    feeTier: z.number().int().describe('pool fee in hundredths of a basis point (3000 = 0.3%)'),
  }),
  range: z
    .object({ lower: z.number(), upper: z.number(), current: z.number() })
    .describe('human prices of token0 in units of token1, adjusted for decimals'),
  inRange: z.boolean().describe('tickLower <= pool tick < tickUpper'),
  pendingRewardsUsd: usd,
});
export type PositionView = z.infer<typeof positionView>;

export const feesView = z.object({
  contributedUsd: usd,
  withdrawnUsd: usd,
  taxedUsd: usd,
  highWaterUsd: usd,
});
export type FeesView = z.infer<typeof feesView>;

export const suspensionView = z.object({
  reason: z.string(),
  exitsAvailable: z.literal(true),
  since: unixMs.describe('when the vault was suspended'),
});
export type SuspensionView = z.infer<typeof suspensionView>;

export const snapshotView = z.object({
  vault: addressOut,
  owner: addressOut,
  status: vaultStatus,
  strategy: z.string(),
  valueUsd: usd,
  capitalInUsd: usd,
  capitalOutUsd: usd,
  netUsd: usd,
  strategyDeltaUsd: usd,
  marketDeltaUsd: usd,
  positions: z.array(positionView),
  fees: feesView,
  suspension: suspensionView.nullable(),
  updatedAt: unixMs,
});
export type SnapshotView = z.infer<typeof snapshotView>;

export const equityPointView = z.object({
  ts: unixMs,
  valueUsd: usd,
  capitalInUsd: usd,
  capitalOutUsd: usd,
});
export type EquityPointView = z.infer<typeof equityPointView>;
