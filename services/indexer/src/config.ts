import {
  baseConfigSchema,
  CONFIG_DEFAULTS,
  createConfig,
  doc,
  type Env,
  envField,
  configInt as int,
  kafkaEnv,
  kafkaSecurity,
  type Logger,
  sharedEnv,
} from '@vault-yield/common';
import { DEFAULT_RECORD_ENCODING, RECORD_ENCODINGS } from '@vault-yield/domain';
import type { LogSecurity } from '@vault-yield/log';
import { z } from 'zod';

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'expected an address: 0x followed by 40 hex digits')
  .transform((a) => a.toLowerCase() as `0x${string}`);

/** How the valuation lens may run (VALUATION_LENS / valuationLens). */
export const VALUATION_LENSES = ['auto', 'override', 'create'] as const;

/**
 * The indexer's defaults, used by `indexerConfigSchema` and named in the README's table (the env
 * schema below has none of its own: a variable left unset takes the config's).
 */
export const INDEXER_DEFAULTS = {
  rpcTimeoutMs: 30_000,
  confirmations: 0,
  partitions: 12,
  pollIntervalMs: 1000,
  maxBlockRange: 10_000,
  concurrency: 4,
  reorgWindow: 128,
  markIntervalBlocks: 10,
  markMinIntervalMs: 0,
  metricsHost: '127.0.0.1',
  heartbeatSeconds: 3600,
  valuationLens: 'auto',
} as const;

const is = (v: string | number) => `\`${v}\``;

/**
 * Environment of the indexer process (see README / main.ts): formats only. Defaults live in one
 * place, `indexerConfigSchema`, which `indexerConfigFromEnv`'s result goes through like any config.
 */
export const indexerEnvSchema = baseConfigSchema.extend({
  RPC_URL: doc(envField.httpUrl(), 'JSON-RPC endpoint'),
  /** Optional: the node's WebSocket endpoint; new heads wake the indexer instead of its next poll. */
  RPC_WS_URL: doc(
    z.url({ protocol: /^wss?$/, error: 'expected a ws:// or wss:// URL' }).optional(),
    "the node's WebSocket endpoint (`ws://`, `wss://`): the indexer follows `eth_subscribe newHeads` and steps as a block lands; a dropped subscription is made again (1 s backoff doubling to 30 s) and `POLL_INTERVAL_MS` stays the floor meanwhile",
    'unset: polling only',
  ),
  /** Optional: read from the node when unset. */
  CHAIN_ID: doc(envField.int(1).optional(), 'chain id', 'read from the node'),
  FACTORY_ADDRESS: doc(address, 'address of the vault factory (vaults are discovered from its events)'),
  /** Optional: the factory's deploymentBlock when unset. Must be ≤ the factory's first vault. */
  START_BLOCK: doc(
    envField.int(0).optional(),
    "first block indexed (must not be above the factory's first vault)",
    "the factory's `deploymentBlock`",
  ),
  /**
   * Optional: index up to and including this block (once it is confirmed), checkpoint it, then
   * exit 0 instead of following the head. Must be ≥ the start block and ≥ a stored checkpoint.
   */
  END_BLOCK: doc(
    envField.int(0).optional(),
    'publish and checkpoint up to and including this block (once `CONFIRMATIONS` deep), then exit 0',
    'unset: follow the head',
  ),
  CONFIRMATIONS: doc(
    envField.int(0, 10_000).optional(),
    'blocks behind the head before publishing',
    is(INDEXER_DEFAULTS.confirmations),
  ),
  ...kafkaEnv,
  KAFKA_TOPIC: envField.topic().optional(),
  /** Partitions when the indexer creates the topic. */
  KAFKA_PARTITIONS: doc(
    envField.int(1, 1024).optional(),
    "partitions when the indexer creates the topic (an existing topic keeps its own; a count that changes under a running publisher stops it: a vault's records must stay in one partition)",
    is(INDEXER_DEFAULTS.partitions),
  ),
  /** Time-out of one RPC request; a timed-out call is retried (smaller ranges for eth_getLogs). */
  RPC_TIMEOUT_MS: doc(
    envField.int(100, 600_000).optional(),
    'time-out of one RPC request; a timed-out call is retried (smaller ranges for `eth_getLogs`)',
    is(INDEXER_DEFAULTS.rpcTimeoutMs),
  ),
  /** Replication factor of the topic the indexer creates; unset: 3, or 1 on a single broker. */
  KAFKA_REPLICATION_FACTOR: doc(
    envField.int(1, 16).optional(),
    "replication factor when the indexer creates the topic; **production: 3**, with the brokers' `min.insync.replicas=2` (the producer writes with `acks=-1`), so one broker can fail without losing an acknowledged record or stopping writes",
    '3, or 1 on a single broker',
  ),
  /** How records are written: binary (default) or json (while a projector older than binary records still reads the topic). */
  RECORD_ENCODING: doc(
    z.enum(RECORD_ENCODINGS, { error: 'expected binary or json' }).optional(),
    'how records are written to the log: `binary`, or `json` while projectors of a version before binary records still read it (see [Where the figures come from](#where-the-figures-come-from-the-chain))',
    is(DEFAULT_RECORD_ENCODING),
  ),
  DATABASE_URL: sharedEnv.DATABASE_URL,
  DATABASE_POOLING: sharedEnv.DATABASE_POOLING,
  PROJECTION_SCHEMA: envField.identifier().optional(),
  POLL_INTERVAL_MS: doc(
    envField.int(10, 600_000).optional(),
    'how often the indexer asks for the head without (or between) announced heads',
    is(INDEXER_DEFAULTS.pollIntervalMs),
  ),
  MAX_BLOCK_RANGE: doc(
    envField.int(1, 10_000_000).optional(),
    'largest `eth_getLogs` range, blocks (the range adapts below it)',
    is(INDEXER_DEFAULTS.maxBlockRange),
  ),
  CONCURRENCY: doc(
    envField.int(1, 64).optional(),
    '`eth_getLogs` ranges fetched at once',
    is(INDEXER_DEFAULTS.concurrency),
  ),
  REORG_WINDOW: doc(
    envField.int(1, 100_000).optional(),
    'block hashes kept to detect and revert reorgs; a deeper reorg halts the indexer (see [Reorgs](#reorgs))',
    is(INDEXER_DEFAULTS.reorgWindow),
  ),
  MARK_INTERVAL_BLOCKS: doc(
    envField.int(0).optional(),
    'mark cadence: at most one `mark` record per vault per this many blocks (flips excepted)',
    is(INDEXER_DEFAULTS.markIntervalBlocks),
  ),
  MARK_MIN_INTERVAL_MS: doc(
    envField.int(0).optional(),
    'mark cadence: at most one `mark` record per vault per this much block time, ms (flips excepted)',
    is(INDEXER_DEFAULTS.markMinIntervalMs),
  ),
  // One row in the README's table for the indexer and the projector: the text says both.
  FOLLOW_LIVE: doc(
    envField.bool().default(false),
    "follow the live build of `VIEWS_SCHEMA` (its `vy_live`, `vy_builds`) and move by itself when `rebuild`/`reindex` switch the views. The projector folds into the live schema instead of `PROJECTION_SCHEMA` (then only the schema before any switch): the batch in flight commits, then folding resumes in the new schema from the offsets stored there by the build (under the build's consumer group, from its topics). The indexer publishes the log the live build folds: once a `reindex --topic NEW` is live, the step in flight commits and it resumes on `NEW` from the reindex's checkpoint namespace (blocks mined meanwhile go to `NEW`; the old log ends). Off: each stays on `PROJECTION_SCHEMA` (and the indexer on `KAFKA_TOPIC`): pinned",
  ),
  VIEWS_SCHEMA: sharedEnv.VIEWS_SCHEMA,
  FOLLOW_LIVE_INTERVAL_MS: doc(
    envField.int(100, 3_600_000).default(5_000),
    "with `FOLLOW_LIVE`: how often the live schema and its build are read besides the switch's notification (Postgres `LISTEN vault_yield_live`, sent by `rebuild`'s switch)",
  ),
  METRICS_PORT: sharedEnv.METRICS_PORT.optional(),
  /** Address the metrics server binds to (default loopback). */
  METRICS_HOST: z.string().min(1).optional(),
  /** How the valuation lens runs: auto (default: probed), override, or create (see packages/chain valuation). */
  VALUATION_LENS: doc(
    z
      .enum(VALUATION_LENSES, { error: 'expected auto, override (state override) or create (creation code)' })
      .optional(),
    "how the valuation lens runs in `eth_call` (see [Where the figures come from](#where-the-figures-come-from-the-chain)): `override` (its code set by a state override, ≈ 480 vaults a call; a node found ignoring it is an error), `create` (creation code, ≈ 26 vaults a call under EIP-170), or `auto`: probe the node once and take `override` where it honours one (logged, and in the indexer's status). The values are the same either way",
    is(INDEXER_DEFAULTS.valuationLens),
  ),
  /** Default heartbeat of price feeds, seconds: older prices are flagged stale. */
  FEED_HEARTBEAT_SECONDS: doc(
    envField.int(1, 31_536_000).optional(),
    "default heartbeat of price feeds: a price whose feed's `updatedAt` is older than this at a record's block is named in the snapshot's `stalePrices`, counted by `projector_stale_price_records_total` and listed by `status`",
    is(INDEXER_DEFAULTS.heartbeatSeconds),
  ),
  /** Per-feed heartbeats: `0xFEED=SECONDS,0xFEED=SECONDS`. */
  FEED_HEARTBEATS: doc(
    z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        const out: Record<`0x${string}`, number> = {};
        for (const part of v
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean)) {
          const m = /^(0x[0-9a-fA-F]{40})=([1-9][0-9]{0,7})$/.exec(part);
          if (!m) {
            ctx.addIssue({
              code: 'custom',
              message: `expected 0xFEED=SECONDS pairs separated by commas, got "${part}"`,
            });
            return z.NEVER;
          }
          out[m[1]!.toLowerCase() as `0x${string}`] = Number(m[2]);
        }
        return out;
      }),
    'per-feed heartbeats, `0xFEED=SECONDS,…` (stablecoin feeds commonly beat every 86400 s)',
  ),
});

export type IndexerEnv = z.output<typeof indexerEnvSchema>;

export function loadIndexerEnv(env: Env = process.env): IndexerEnv {
  return createConfig(indexerEnvSchema, env);
}

/**
 * The indexer's one config shape (camelCase), with every default. `createIndexer` parses what it
 * is given with it; the environment reaches it through `indexerConfigFromEnv`.
 */
export const indexerConfigSchema = z.object({
  rpcUrl: z.string().min(1),
  /**
   * WebSocket endpoint of the node (ws:// or wss://): the indexer follows `newHeads` and steps as
   * soon as a block lands; `pollIntervalMs` stays the floor (and is all it has without one).
   */
  rpcWsUrl: z.url({ protocol: /^wss?$/ }).optional(),
  /** Time-out of one RPC request; a timed-out call is retried (smaller ranges for eth_getLogs). */
  rpcTimeoutMs: int(100, 600_000).default(INDEXER_DEFAULTS.rpcTimeoutMs),
  /** Read from the node when omitted. */
  chainId: int(1).optional(),
  factory: address,
  /** Default: the factory's deploymentBlock. Must not be above the factory's first vault. */
  startBlock: int().optional(),
  /** Blocks behind the head the indexer stays. */
  confirmations: int(0, 10_000).default(INDEXER_DEFAULTS.confirmations),
  /**
   * Last block to index. The indexer publishes and checkpoints up to and including it (waiting
   * until it is `confirmations` deep when it is not yet), checks once more that the checkpointed
   * block is still canonical, closes its connections and resolves `done`, instead of following
   * the head. Must be ≥ the start block and ≥ a stored checkpoint (start() refuses otherwise).
   */
  endBlock: int().optional(),
  kafka: z.object({
    brokers: z.array(z.string().min(1)).min(1).readonly(),
    topic: z.string().min(1).default(CONFIG_DEFAULTS.recordsTopic),
    /** Partitions when the indexer creates the topic. */
    partitions: int(1, 1024).default(INDEXER_DEFAULTS.partitions),
    /** Replication factor of the topic the indexer creates; unset: 3, or 1 on a single broker. */
    replicationFactor: int(1, 16).optional(),
    /**
     * SASL/TLS for every Kafka client of this process (the publisher thread included); unset: the
     * process context's (plaintext without one).
     */
    security: z.custom<LogSecurity>().optional(),
    /** How records are written to the log (packages/domain records/codec.ts). */
    encoding: z.enum(RECORD_ENCODINGS).default(DEFAULT_RECORD_ENCODING),
  }),
  databaseUrl: z.string().min(1),
  /**
   * `transaction`: `databaseUrl` is a transaction-mode pooler (PgBouncer): nothing is set per
   * connection and no statement is named; the role's search_path must name `schema` (checked at
   * start). The indexer holds no session state (no LISTEN, no session lock).
   */
  pooling: z.enum(['session', 'transaction']).default('session'),
  /** Postgres schema holding indexer_checkpoint & co. */
  schema: z.string().min(1).default(CONFIG_DEFAULTS.projectionSchema),
  pollIntervalMs: int(10, 600_000).default(INDEXER_DEFAULTS.pollIntervalMs),
  /** Largest getLogs range (blocks); the range adapts below it. */
  maxBlockRange: int(1, 10_000_000).default(INDEXER_DEFAULTS.maxBlockRange),
  /** getLogs ranges fetched at once. */
  concurrency: int(1, 64).default(INDEXER_DEFAULTS.concurrency),
  /** Block hashes kept for reorg detection. */
  reorgWindow: int(1, 100_000).default(INDEXER_DEFAULTS.reorgWindow),
  /** Mark cadence: at most one mark per vault per N blocks / M ms of block time (flips excepted). */
  mark: z
    .object({
      intervalBlocks: int().default(INDEXER_DEFAULTS.markIntervalBlocks),
      minIntervalMs: int().default(INDEXER_DEFAULTS.markMinIntervalMs),
    })
    .prefault({}),
  /** Serve /metrics on this port. */
  metricsPort: int(0, 65_535).optional(),
  /** Address the metrics server binds to: loopback unless widened (`0.0.0.0`, an interface's address). */
  metricsHost: z.string().min(1).default(INDEXER_DEFAULTS.metricsHost),
  logger: z.custom<Logger>((v) => typeof v === 'object' && v !== null).optional(),
  /** Above this many watched addresses, vault logs are fetched by topic and filtered here. */
  addressFilterLimit: int(1).default(1000),
  /** Logs one getLogs chunk aims for (the adaptive range sizes itself to it); unset: the planner's. */
  targetLogsPerChunk: int(1).optional(),
  /**
   * Price feed heartbeats in seconds: a price whose feed's `updatedAt` is older than this at the
   * record's block is named in the snapshot's `stalePrices`. Per feed address; else `default`
   * (3600 s, the common Chainlink heartbeat of volatile USD feeds; stablecoin feeds often use 86400).
   */
  heartbeats: z
    .object({
      default: int(1, 31_536_000).default(INDEXER_DEFAULTS.heartbeatSeconds),
      byFeed: z
        .record(z.string(), int(1, 31_536_000))
        .default({})
        .transform((m) => Object.fromEntries(Object.entries(m).map(([f, s]) => [f.toLowerCase(), s]))),
    })
    .prefault({}),
  /**
   * How the valuation lens runs in eth_call: `auto` probes the node once for state overrides
   * (`override`: ≈ 480 vaults a call) and falls back to creation code (`create`: ≈ 26, EIP-170).
   */
  valuationLens: z.enum(VALUATION_LENSES).default(INDEXER_DEFAULTS.valuationLens),
  /** A streak of failed steps halts the indexer once it is 8 long and this old (ms). */
  giveUpAfterMs: int(0).default(120_000),
  /**
   * Compaction of the sequence rows below the reorg window into spans (indexer_vault_seq_spans,
   * migration 0019): run once the window slid `everyBlocks` since the last run, at most `maxRows`
   * rows a transaction (again at the next batch while rows are left); a span covers at most
   * `maxSpanBlocks` blocks (republish recounts a span's logs whole) and `maxSpanMarks` marks.
   */
  seqCompaction: z
    .object({
      everyBlocks: int(1).default(64),
      maxRows: int(1).default(20_000),
      maxSpanBlocks: int(1).default(50_000),
      maxSpanMarks: int(1).default(4_096),
    })
    .prefault({}),
});

/** What `createIndexer` takes: defaults may be left out. */
export type IndexerConfig = z.input<typeof indexerConfigSchema>;
/** The config with every default filled in. */
export type ResolvedIndexerConfig = z.output<typeof indexerConfigSchema>;

/** The indexer's config from its validated environment (main.ts, the CLI's dev and reindex). */
export function indexerConfigFromEnv(env: IndexerEnv, logger?: Logger): IndexerConfig {
  return {
    rpcUrl: env.RPC_URL,
    rpcWsUrl: env.RPC_WS_URL,
    rpcTimeoutMs: env.RPC_TIMEOUT_MS,
    chainId: env.CHAIN_ID,
    factory: env.FACTORY_ADDRESS,
    startBlock: env.START_BLOCK,
    confirmations: env.CONFIRMATIONS,
    endBlock: env.END_BLOCK,
    kafka: {
      brokers: env.KAFKA_BROKERS,
      topic: env.KAFKA_TOPIC,
      partitions: env.KAFKA_PARTITIONS,
      replicationFactor: env.KAFKA_REPLICATION_FACTOR,
      security: kafkaSecurity(env),
      encoding: env.RECORD_ENCODING,
    },
    databaseUrl: env.DATABASE_URL,
    pooling: env.DATABASE_POOLING,
    schema: env.PROJECTION_SCHEMA,
    pollIntervalMs: env.POLL_INTERVAL_MS,
    maxBlockRange: env.MAX_BLOCK_RANGE,
    concurrency: env.CONCURRENCY,
    reorgWindow: env.REORG_WINDOW,
    mark: { intervalBlocks: env.MARK_INTERVAL_BLOCKS, minIntervalMs: env.MARK_MIN_INTERVAL_MS },
    metricsPort: env.METRICS_PORT,
    metricsHost: env.METRICS_HOST,
    heartbeats: { default: env.FEED_HEARTBEAT_SECONDS, byFeed: env.FEED_HEARTBEATS },
    valuationLens: env.VALUATION_LENS,
    logger,
  };
}
