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

const sinceV5 =
  'null on vaults folded before fold version 5 until a rebuild (absent from snapshots written before)';
const fraction = z.number().describe('a fraction (0.12 = 12 %), 6 decimals');

export const timeInRangeView = z
  .object({
    share: fraction.min(0).max(1).nullable().describe('inRangeMs / openMs; null before any block time open'),
    inRangeMs: z.number().int().nonnegative().describe('block time open and in range, ms'),
    openMs: z.number().int().nonnegative().describe('block time open (liquidity > 0), ms'),
  })
  .describe(
    'share of block time in range: each interval between two block ends of the vault counts as the earlier end stood (every range flip is a record of its own, so nothing flips unseen between them)',
  );
export type TimeInRangeView = z.infer<typeof timeInRangeView>;

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
  uncollectedFeesUsd: usd.describe(
    "trading fees the pool owes this position and not yet collected (tokensOwed plus fees accrued since the position's last update, by the pool's own fee-growth formula), at the snapshot's prices; included in valueUsd",
  ),
  timeInRange: timeInRangeView
    .nullable()
    .optional()
    .describe(
      `this position's time in range since it was opened (a rebalance keeps its id and its time); ${sinceV5}`,
    ),
});
export type PositionView = z.infer<typeof positionView>;

const sinceV4 = 'absent on snapshots projected before fold version 4 until a rebuild';
export const feesView = z.object({
  contributedUsd: usd.describe("Σ the owner's deposits (deposit rows), each valued at its block's prices"),
  withdrawnUsd: usd.describe(
    "Σ the owner's withdrawals (withdrawal rows), each valued at its block's prices; equals capitalOutUsd",
  ),
  taxedUsd: usd.describe('Σ performance fees charged (fee.charged rows), each valued at its block’s prices'),
  highWaterUsd: usd.describe(
    'the value above which a performance fee is owed; moves only on capital in and out and charges',
  ),
  receivedUsd: usd
    .optional()
    .describe(
      `Σ tokens and liquidity received from others (transfer.received, position.received rows), each valued at its block's prices: capital in, not the owner's deposits; ${sinceV4}`,
    ),
  unexplainedInUsd: usd
    .optional()
    .describe(
      `Σ balance increases no vault event explains (balance.reconciled rows bookedAs capitalIn): capital in; ${sinceV4}`,
    ),
  unexplainedOutUsd: usd
    .optional()
    .describe(
      `Σ balance decreases no vault event explains (balance.reconciled rows bookedAs loss): a loss, in netUsd, never capital out; ${sinceV4}`,
    ),
});
export type FeesView = z.infer<typeof feesView>;

export const suspensionView = z.object({
  reason: z.string(),
  exitsAvailable: z.literal(true),
  since: unixMs.describe('when the vault was suspended'),
});
export type SuspensionView = z.infer<typeof suspensionView>;

export const stalePriceView = z
  .object({
    token: addressOut,
    symbol: z.string(),
    feed: addressOut.describe('the AggregatorV3Interface feed the price was read from'),
    priceUpdatedAt: unixMs.describe("the feed's updatedAt"),
    ageSeconds: z
      .number()
      .int()
      .nonnegative()
      .describe("updatedAt of the snapshot minus the feed's updatedAt"),
    heartbeatSeconds: z.number().int().positive().describe('the heartbeat configured for the feed'),
    reason: z
      .enum(['stale', 'invalid'])
      .describe(
        "stale: the price is older than its feed's heartbeat; invalid: the feed answered no price (zero or negative) at the latest block read, so the last valid answer (priceUpdatedAt) is used",
      ),
  })
  .describe(
    "a price a served figure used (valueUsd, positions, or marketDeltaUsd through the benchmark basket) that is stale or invalid at the snapshot's block: still used, never silently",
  );
export type StalePriceView = z.infer<typeof stalePriceView>;

export const flowSource = z
  .enum(['deposit', 'withdrawal', 'received', 'unexplainedIn', 'unexplainedOut', 'fee'])
  .describe(
    "where a flow came from: the owner's deposit or withdrawal, tokens or liquidity received from someone else (transfer.received, position.received), a balance change no vault event explains (in, or out: a loss), a performance fee charged",
  );
export type FlowSource = z.infer<typeof flowSource>;

export const unpricedFlowView = z
  .object({
    token: addressOut,
    symbol: z.string(),
    flow: flowSource,
    amount: z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .describe('whole tokens, exact (raw / 10^decimals)'),
    blockNumber: z.number().int().nonnegative().describe('the block of the flow'),
  })
  .describe(
    "a flow of a token whose feed never gave a valid price yet: it is in none of the USD figures (capitalInUsd, fees, highWaterUsd, the benchmark basket) until the token's first valid price, at which block it is booked at that price — never at 0",
  );
export type UnpricedFlowView = z.infer<typeof unpricedFlowView>;

export const drainView = z
  .object({
    since: unixMs.describe('block time of the first unexplained outflow since the owner last acted'),
    blockNumber: z.number().int().nonnegative().describe('its block'),
    lostUsd: usd.describe(
      "value lost since then, at each outflow's block prices (a token without a price yet counts once priced)",
    ),
  })
  .describe(
    'the vault lost tokens no vault event explains (no withdrawal, fee or position event): booked as a loss (netUsd drops, fees.unexplainedOutUsd grows), status attention until the owner acts again (a deposit, a withdrawal or an exit request)',
  );
export type DrainView = z.infer<typeof drainView>;

export const behindView = z.object({
  deadLetters: z.number().int().positive().describe('records of this vault in dead letters'),
  kinds: z
    .array(z.enum(['decode', 'envelope', 'fold', 'gap']))
    .describe(
      'why: decode (unreadable), envelope (breaks the log rules), fold (the fold failed: a bug), gap (held: a record before them is missing from the log)',
    ),
  first: z
    .object({ partition: z.number().int().nonnegative(), offset: z.string() })
    .describe('log position of the earliest one'),
  gap: z
    .object({
      lastSeq: z.number().int().nonnegative().nullable().describe('the last sequence number folded'),
      missingFrom: z.number().int().positive().describe('first missing sequence number'),
      missingTo: z.number().int().positive().describe('last missing sequence number'),
      fromBlock: z.number().int().nonnegative().describe('block of the last record folded'),
      toBlock: z.number().int().nonnegative().describe('block of the first record held'),
    })
    .optional()
    .describe(
      'present when the vault is held: its figures stand at `lastSeq` until the missing records are republished (`vault-yield republish --vault … --from-block fromBlock --to-block toBlock`)',
    ),
});
export type BehindView = z.infer<typeof behindView>;

const wholeSigned = z
  .string()
  .regex(/^-?\d+(\.\d+)?$/)
  .describe('whole tokens, exact (raw / 10^decimals), signed');
const wholeAmount = z
  .string()
  .regex(/^\d+(\.\d+)?$/)
  .describe('whole tokens, exact (raw / 10^decimals)');
const apr = fraction
  .nullable()
  .describe(
    'annualised on time-weighted capital: earned USD / ∫ valueUsd dt × 365 days; null until the vault has been worth at least 1 USD for a day of block time',
  );

export const lpView = z
  .object({
    hold: z
      .object({
        valueUsd: usd.describe(
          "the benchmark basket at the snapshot's prices: the tokens put in (each deposit or inflow adds its tokens), each withdrawal scaling it by (1 − W / value just before), as if they had been held",
        ),
        leadUsd: usd.describe('valueUsd of the vault − hold.valueUsd: what the vault made beyond holding'),
      })
      .describe('the vault against simply holding what was put in'),
    tradingFees: z
      .object({
        earnedUsd: usd.describe(
          'trading fees earned (collected + owed by the pools), each part valued at the block end where it first appeared',
        ),
        uncollectedUsd: usd.describe(
          "owed by the pools now, at the snapshot's prices (as uncollectedFeesUsd)",
        ),
        apr,
        tokens: z.array(
          z.object({
            token: addressOut,
            symbol: z.string(),
            earned: wholeAmount.describe('collected + uncollected'),
            collected: wholeAmount.describe('Σ fees.collected'),
            uncollected: wholeAmount.describe('owed by the pools now'),
          }),
        ),
      })
      .describe('trading fees, in USD at the price when earned and in token terms'),
    rewards: z
      .object({
        earnedUsd: usd.describe(
          'rewards earned (claimed + pending), each part valued at the block end where it first appeared',
        ),
        claimedUsd: usd.describe("Σ rewards claimed, each at its block's prices"),
        pendingUsd: usd.describe("earned and not claimed, at the snapshot's prices (as pendingRewardsUsd)"),
        apr,
        tokens: z.array(
          z.object({ token: addressOut, symbol: z.string(), claimed: wholeAmount, pending: wholeAmount }),
        ),
      })
      .describe('incentive rewards, claimed and pending apart'),
    attribution: z
      .object({
        tradingFeesUsd: usd.describe('tradingFees.earnedUsd'),
        rewardsUsd: usd.describe('rewards.earnedUsd'),
        performanceFeesUsd: usd.describe('− fees.taxedUsd: charged by the service'),
        lossesUsd: usd.describe('− fees.unexplainedOutUsd: value gone with no event (drains)'),
        priceUsd: usd.describe(
          'the rest of netUsd: price moves of what the vault held (market and divergence) after it was earned or put in',
        ),
      })
      .describe('netUsd split by where it came from; the five add up to netUsd exactly (in micro-dollars)'),
    divergence: z
      .object({
        usd: usd.describe('realisedUsd + unrealisedUsd; negative is a loss (impermanent loss)'),
        realisedUsd: usd.describe(
          "Σ at each decrease, rebalance or close: what came out of the position − that share of what went in, valued at that block's prices",
        ),
        unrealisedUsd: usd.describe(
          "Σ over live positions: their tokens now at the pool price (no fees) − what was put in, at the snapshot's prices",
        ),
      })
      .describe("the positions' value without fees against holding what went into them"),
    timeInRange: timeInRangeView.describe(
      'the vault as a whole: block time with at least one open position, and of it, with every open position in range',
    ),
    rebalances: z
      .object({
        count: z.number().int().nonnegative().describe('position.rebalanced records'),
        swaps: z.number().int().nonnegative().describe("the vault's own swaps in its pool (swap records)"),
        costUsd: usd.describe(
          "Σ over the vault's swaps of the value paid − the value received, both at the feeds' prices of the swap's block: what rebalancing the token ratio cost; swapFeesUsd + priceImpactUsd",
        ),
        swapFeesUsd: usd.describe(
          "Σ the pool's fee: amountIn × feeTier / 10^6, at the block's price of the token paid",
        ),
        priceImpactUsd: usd.describe(
          "costUsd − swapFeesUsd: the pool's price against the feeds' (negative when the pool paid better than the feeds)",
        ),
      })
      .describe('how often the agent moved a range, and what its swaps cost where the chain shows it'),
    drawdown: z
      .object({
        max: fraction.min(0).max(1).describe('the largest fall of the return index from a previous peak'),
        current: fraction.min(0).max(1).describe('the fall from the peak now'),
      })
      .describe('of the return index (net of flows and of the performance fee), at block ends'),
    tokens: z
      .array(
        z.object({
          token: addressOut,
          symbol: z.string(),
          held: wholeAmount.describe('idle + in positions at the pool price + owed + pending rewards'),
          in: wholeAmount.describe('put in: deposits, tokens and liquidity received, unexplained inflows'),
          out: wholeAmount.describe('taken out: withdrawals'),
          pnl: wholeSigned.describe('held − in + out'),
        }),
      )
      .describe('PnL in token terms, per token the vault ever held or moved, by address'),
  })
  .describe(
    'what LP dashboards show, from the log alone (definitions: the LP figures section of the API description)',
  );
export type LpView = z.infer<typeof lpView>;

export const snapshotView = z.object({
  id: z
    .string()
    .regex(/^eip155:[1-9][0-9]*:0x[0-9a-f]{40}$/)
    .describe(
      "the vault's id: its chain and address as a CAIP-10 account id, `eip155:{chainId}:{address}` (the same address may be a vault on several chains)",
    ),
  chainId: z.number().int().positive().describe('the chain the vault is on (EIP-155 chain id)'),
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
  blockNumber: z
    .number()
    .int()
    .nonnegative()
    .describe(
      'the block whose end the figures are valued at (the block of updatedAt): every figure of the snapshot is the vault at the end of this block',
    ),
  pendingRewardsUsd: usd.describe(
    'rewards earned and not yet claimed, whole vault (shown even with no open position; the per-position figures attribute it); included in valueUsd',
  ),
  uncollectedFeesUsd: usd.describe(
    'trading fees owed by the pools on every live position, closed ones included; included in valueUsd',
  ),
  stalePrices: z
    .array(stalePriceView)
    .describe(
      'every price a served figure used (held tokens, positions, pending rewards, and the benchmark basket behind marketDeltaUsd) that was stale (older than its heartbeat at updatedAt) or invalid (the feed answered zero or a negative value); empty when all are fresh and valid',
    ),
  drain: drainView
    .nullable()
    .optional()
    .describe(
      `null unless an outflow no vault event explains happened since the owner last acted (a loss); ${sinceV4}`,
    ),
  unpricedFlows: z
    .array(unpricedFlowView)
    .optional()
    .describe(
      "flows waiting for their token's first valid price, in log order (their ledger rows' amounts have valueUsd null); empty when none. Absent on snapshots projected before fold version 4 until a rebuild",
    ),
  lp: lpView.nullable().optional().describe(`the LP figures; ${sinceV5}`),
  behind: behindView
    .nullable()
    .optional()
    .describe(
      'null when every record of the vault in the log was applied; otherwise the vault has dead letters (records the projector could not apply) and the figures may miss their effect until `vault-yield dead-letters retry` re-applies them',
    ),
});
export type SnapshotView = z.infer<typeof snapshotView>;

export const equityPointView = z.object({
  ts: unixMs,
  blockNumber: z.number().int().nonnegative().describe('the block at whose end the point is valued'),
  valueUsd: usd,
  capitalInUsd: usd,
  capitalOutUsd: usd,
  holdValueUsd: usd
    .nullable()
    .optional()
    .describe(`the benchmark basket (lp.hold.valueUsd) at the point; ${sinceV5}`),
});
export type EquityPointView = z.infer<typeof equityPointView>;
