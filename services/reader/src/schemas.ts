import { zodToOpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '@hono/zod-openapi';
import { activityTypes, equityPointView, ledgerPayloadSchemas, snapshotView } from '@vault-yield/domain';

/**
 * Response shapes the reader serves beyond the domain views (which it reuses as they are). The
 * route declarations (openapi/routes.ts) use these, so the OpenAPI document and the client's types
 * come from here; the tests validate every response against the document. The snapshot's shape is
 * the domain's `snapshotView` alone: a field added there appears in the document and the client.
 */
const address = z
  .string()
  .regex(/^0x[0-9a-f]{40}$/)
  .describe('lowercase 0x address');
const hash = z
  .string()
  .regex(/^0x[0-9a-f]{64}$/)
  .describe('lowercase 0x + 64 hex');
const vaultIdOut = z
  .string()
  .regex(/^eip155:[1-9][0-9]*:0x[0-9a-f]{40}$/)
  .describe('a vault id: CAIP-10 `eip155:{chainId}:{address}`, the address lowercase');
const chainId = z.number().int().positive().describe('EIP-155 chain id');
const unixMs = z.number().int().nonnegative().describe('Unix time in milliseconds');

/** A token amount of a ledger row as people read it (domain mapping/amounts.ts). */
export const ledgerAmount = z
  .object({
    field: z
      .string()
      .describe('the payload field holding the raw amount (`amount`, `amount0`, `amount1Out`, …)'),
    token: address,
    symbol: z.string().describe('the token’s symbol'),
    amount: z
      .string()
      .regex(/^-?\d+(\.\d+)?$/)
      .describe('whole tokens, exact (raw / 10^decimals), signed where the field is (a resize’s deltas)'),
    valueUsd: z
      .number()
      .nullable()
      .describe(
        'USD at the row’s block: the price the vault was valued with there; null when the token had no valid price yet at that block (its feed never answered one): the flow is valued at the token’s first valid price in the vault’s figures (snapshot `unpricedFlows` until then), never at 0',
      ),
  })
  .openapi('LedgerAmount');

const ledgerColumns = {
  id: z.string().describe('stable row id: chainId:blockHash:txHash:logIndex:vault'),
  vault: address,
  chainId: chainId.describe("the vault's chain (EIP-155 chain id): the vault is `eip155:{chainId}:{vault}`"),
  txHash: hash,
  blockNumber: z.number().int().nonnegative(),
  blockHash: hash,
  txIndex: z
    .number()
    .int()
    .min(-1)
    .describe(
      'transaction index in the block; 2147483647 for balance.reconciled rows (after every transaction)',
    ),
  logIndex: z
    .number()
    .int()
    .min(-64)
    .describe('log index in the block; -2, -3, … for balance.reconciled rows (one per token)'),
  ts: unixMs.describe('block time, Unix milliseconds'),
  amounts: z
    .array(ledgerAmount)
    .nullable()
    .describe(
      'the row’s token amounts with symbols, whole tokens and USD at its block (additive); [] for a type without amounts; null on rows projected before migration 0018 until a rebuild',
    ),
};
/** One ledger row per activity type, with `data` the record's payload as stored. */
const ledgerVariants = activityTypes.map((type) =>
  z.object({
    ...ledgerColumns,
    type: z.literal(type),
    data: ledgerPayloadSchemas[type].describe(`payload of ${type}, as stored (amounts are raw token units)`),
  }),
);
/** The row's type for clients: the columns, the type, and the payload (shape by type). */
const ledgerRowType = z.object({
  ...ledgerColumns,
  type: z.enum(activityTypes),
  data: z.record(z.string(), z.unknown()),
});
export const ledgerRow = z
  .discriminatedUnion('type', ledgerVariants as unknown as [z.ZodObject, ...z.ZodObject[]])
  .describe('One row of the activity ledger (seed §2.5)')
  .openapi('LedgerRow') as unknown as typeof ledgerRowType;

/** A strategy's LP figures over its member vaults (issue #46 item 8; definitions: LP figures). */
export const strategyLpFigures = z
  .object({
    feeApr: z
      .number()
      .nullable()
      .describe(
        'Σ trading fees earned by the member vaults while they ran the strategy × 365 days / Σ their ∫ value dt: fee income on time-weighted capital, a fraction a year; null with liveApr, before a day of funded time or with no capital-time',
      ),
    rewardApr: z
      .number()
      .nullable()
      .describe('as feeApr, of the rewards earned (claimed + pending, valued when earned)'),
    timeInRange: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .describe(
        'Σ block time with every open position in range / Σ block time with one open, over the member vaults under the strategy; null with liveApr or with no time open',
      ),
    rebalancesPerWeek: z
      .number()
      .nonnegative()
      .nullable()
      .describe(
        'Σ position.rebalanced records × 7 days / Σ block time the member vaults were worth at least 1 USD under the strategy; null with liveApr or before a day of funded time',
      ),
    divergenceApr: z
      .number()
      .nullable()
      .describe(
        'as feeApr, of the divergence realised by decreases, rebalances and closes (negative: a loss against holding); realised only',
      ),
    maxDrawdown: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .describe(
        'largest fall from a peak of the strategy’s chained daily returns (those of liveApr and sigma), a fraction; null with liveApr',
      ),
  })
  .describe(
    'the LP figures over the strategy’s member vaults, realised only, each interval and event counted for the strategy in force then; every figure null while liveApr is null (vaults folded before fold version 5 add nothing)',
  )
  .openapi('StrategyLpFigures');

export const strategyEntry = z
  .object({
    id: z.string().describe('strategy id; vault snapshots name it in `strategy`'),
    name: z.string().describe('display name'),
    description: z.string().describe('display copy'),
    riskNote: z.string().describe('display copy: the risks the strategy takes'),
    pairs: z
      .array(z.object({ a: z.string(), b: z.string(), venues: z.array(z.string()) }))
      .describe('pools the strategy would aim at now (live screen output; not a static promise)'),
    liveApr: z
      .number()
      .nullable()
      .describe(
        'realised annualised time-weighted return of the strategy vaults, flows removed, as a fraction (0.12 = 12 %/yr); null until enough history; never a projection',
      ),
    sigma: z
      .number()
      .nullable()
      .describe('annualised standard deviation of daily returns, as a fraction; null with liveApr'),
    lp: strategyLpFigures,
  })
  .openapi('Strategy');

export const universeAsset = z
  .object({
    chainId: z.number().int().positive(),
    address: address.describe('token address on chainId'),
    symbol: z.string(),
    name: z.string(),
    category: z.enum(['major', 'stable', 'stock token', 'meme']),
    decimals: z.number().int().min(0).max(36),
    venues: z.array(z.string()).describe('venues with an eligible pool holding the asset'),
    liquidityUsd: z.number().nonnegative().describe('USD value of the asset held in those pools'),
  })
  .openapi('UniverseAsset');

export const universePair = z
  .object({
    chainId: z.number().int().positive(),
    a: z.string().describe('symbol of tokenA'),
    b: z.string().describe('symbol of tokenB'),
    tokenA: address.describe('the lower of the two token addresses'),
    tokenB: address,
    venues: z.array(z.string()),
    tvlUsd: z.number().nonnegative().describe('USD value locked in the pair’s pools across venues'),
    emissions: z.boolean().describe('whether any of the pools pays reward emissions'),
  })
  .openapi('UniversePair');

export const vaultSummary = z
  .object({
    id: vaultIdOut,
    chainId,
    vault: address.describe(
      'the vault’s address on chainId (the same address may be a vault on other chains)',
    ),
    owner: address,
    strategy: z.string(),
    status: snapshotView.shape.status,
    valueUsd: z.number(),
    netUsd: z.number(),
    createdAt: unixMs,
    updatedAt: unixMs,
  })
  .openapi('VaultSummary');

export const errorCodes = [
  'invalid_request',
  'not_found',
  'ambiguous_vault',
  'method_not_allowed',
  'unauthorized',
  'rate_limited',
  'unavailable',
  'internal',
] as const;
export type ErrorCode = (typeof errorCodes)[number];

export const errorBody = z
  .object({
    error: z.object({
      code: z.enum(errorCodes),
      message: z.string().describe('human-readable; for invalid_request it names the parameter path'),
      candidates: z
        .array(vaultIdOut)
        .optional()
        .describe(
          '`ambiguous_vault` (409) only: the ids of the vaults a bare address names, one per chain, by ascending chain id; ask again with one of them',
        ),
    }),
  })
  .openapi('Error');

export const health = z.object({ status: z.literal('ok') }).openapi('Health');
export const ready = z
  .object({
    status: z.literal('ready'),
    schema: z.string().optional().describe('projection schema read (with the admin token only)'),
    migration: z.number().int().optional().describe('highest migration applied (with the admin token only)'),
    deadLetters: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        'records the projector could not apply (readiness stays 200: healthy vaults keep being served; with the admin token only)',
      ),
    vaultsBehind: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('vaults whose snapshot says `behind` (with the admin token only)'),
    lag: z
      .object({
        records: z
          .number()
          .int()
          .nonnegative()
          .nullable()
          .describe(
            "records of the log not yet folded: the topic's high watermarks (Kafka) minus the next offsets stored with the projection (`consumer_offsets`, the furthest consumer group per partition); null when the reader has no `KAFKA_BROKERS` or Kafka did not answer",
          ),
        blocks: z
          .number()
          .int()
          .nonnegative()
          .nullable()
          .describe(
            "blocks between a chain's head as its indexer last published it (its checkpoint in `INDEXER_SCHEMA`) and the newest block folded of that chain's vaults, for the chain furthest behind (`chainId`: block numbers of two chains are never compared); 0 when `records` is 0 (a block without records has nothing to fold); null when no checkpoint is readable by the reader's role",
          ),
        seconds: z
          .number()
          .int()
          .nonnegative()
          .nullable()
          .describe(
            'chain time between that checkpoint block and the newest record folded, seconds (the same rules as `blocks`)',
          ),
        foldedBlock: z
          .number()
          .int()
          .nullable()
          .describe('the newest block folded (null: nothing folded yet)'),
        headBlock: z
          .number()
          .int()
          .nullable()
          .describe("that chain's indexer checkpoint block (null: not readable)"),
        chainId: z
          .number()
          .int()
          .nullable()
          .describe(
            'the chain `blocks`, `seconds`, `foldedBlock` and `headBlock` are of: the one furthest behind (null: no checkpoint readable)',
          ),
        recordsUnknown: z.string().optional().describe('why `records` is null'),
      })
      .optional()
      .describe(
        'how far the projection is behind the log and the chain (with the admin token only). Beyond `READY_MAX_LAG_RECORDS` records, or `READY_MAX_LAG_SECONDS` seconds with records left to fold, `/ready` answers 503, so a load balancer drops a reader whose replica fell behind until it catches up; without the records of lag (no Kafka) blocks and seconds are upper bounds and never turn it 503',
      ),
  })
  .openapi('Ready');

/**
 * A copy of a schema made elsewhere (the domain's views), named as an OpenAPI component. Its
 * `.openapi()` may not exist: it is added to the zod instance @hono/zod-openapi loads, which a
 * test runner can load apart from the domain's.
 */
function named<T extends z.ZodType>(schema: T, refId: string): T {
  const copy = schema.clone();
  zodToOpenAPIRegistry.add(copy, { _internal: { refId } });
  return copy;
}

/** The snapshot's one shape: the domain's view (additive fields go there). */
export const snapshot = named(snapshotView, 'Snapshot');
/** A point of the equity series: the domain's view, with the vault's chain first. */
export const equityPoint = named(z.object({ chainId }).extend(equityPointView.shape), 'EquityPoint');

const block = z
  .object({
    blockNumber: z.number().int().nonnegative(),
    blockTime: unixMs.nullable().describe('its block time, Unix ms; null when not kept'),
  })
  .openapi('ChainBlock');
const lag = (blocks: string, seconds: string) =>
  z.object({
    blocks: z.number().int().nonnegative().nullable().describe(blocks),
    seconds: z.number().int().nonnegative().nullable().describe(seconds),
  });

export const chainEntry = z
  .object({
    chainId,
    vaults: z.number().int().nonnegative().describe('vaults served on the chain'),
    head: block
      .nullable()
      .describe(
        'the newest block the indexer has read on the chain (its kept blocks: read ahead of publishing, so at least the checkpoint); null when the reader cannot read the indexer’s tables (`INDEXER_SCHEMA`) or the chain has no checkpoint',
      ),
    checkpoint: block
      .extend({ updatedAt: unixMs.describe('when the indexer wrote the checkpoint, Unix ms') })
      .nullable()
      .describe('the newest block the indexer published to the log; null as for head'),
    folded: block
      .nullable()
      .describe(
        'the newest block of the chain folded into the served figures (over its vaults; blockTime is its block time); null before anything of the chain was folded',
      ),
    lag: lag(
      'blocks read by the indexer and not yet published: head − checkpoint',
      'seconds since the checkpoint block’s time: now − its block time. It grows while the chain’s node is down or its indexer stopped (a quiet chain that makes no blocks grows it too)',
    ).describe('the indexer’s lag on the chain; null figures when not known'),
    foldedLag: lag(
      'checkpoint − folded block: an upper bound (blocks without a record of the chain’s vaults count too)',
      'chain time between the checkpoint block and the newest block folded (the same bound)',
    ).describe(
      'how far the served figures of the chain are behind its checkpoint; null figures when not known',
    ),
  })
  .openapi('Chain');
