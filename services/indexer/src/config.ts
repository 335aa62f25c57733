import {
  baseConfigSchema,
  createConfig,
  type Env,
  envField,
  kafkaSecurity,
  kafkaSecurityShape,
  type Logger,
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
 * Environment of the indexer process (see README / main.ts): formats only. Defaults live in one
 * place, `indexerConfigSchema`, which `indexerConfigFromEnv`'s result goes through like any config.
 */
export const indexerEnvSchema = baseConfigSchema.extend({
  RPC_URL: envField.httpUrl(),
  /** Optional: the node's WebSocket endpoint; new heads wake the indexer instead of its next poll. */
  RPC_WS_URL: z.url({ protocol: /^wss?$/, error: 'expected a ws:// or wss:// URL' }).optional(),
  /** Optional: read from the node when unset. */
  CHAIN_ID: envField.int(1).optional(),
  FACTORY_ADDRESS: address,
  /** Optional: the factory's deploymentBlock when unset. Must be ≤ the factory's first vault. */
  START_BLOCK: envField.int(0).optional(),
  /**
   * Optional: index up to and including this block (once it is confirmed), checkpoint it, then
   * exit 0 instead of following the head. Must be ≥ the start block and ≥ a stored checkpoint.
   */
  END_BLOCK: envField.int(0).optional(),
  CONFIRMATIONS: envField.int(0, 10_000).optional(),
  KAFKA_BROKERS: envField.brokers(),
  ...kafkaSecurityShape,
  KAFKA_TOPIC: envField.topic().optional(),
  /** Partitions when the indexer creates the topic. */
  KAFKA_PARTITIONS: envField.int(1, 1024).optional(),
  /** Time-out of one RPC request; a timed-out call is retried (smaller ranges for eth_getLogs). */
  RPC_TIMEOUT_MS: envField.int(100, 600_000).optional(),
  /** Replication factor of the topic the indexer creates; unset: 3, or 1 on a single broker. */
  KAFKA_REPLICATION_FACTOR: envField.int(1, 16).optional(),
  /** How records are written: binary (default) or json (while a projector older than binary records still reads the topic). */
  RECORD_ENCODING: z.enum(RECORD_ENCODINGS, { error: 'expected binary or json' }).optional(),
  DATABASE_URL: envField.postgresUrl(),
  PROJECTION_SCHEMA: envField.identifier().optional(),
  POLL_INTERVAL_MS: envField.int(10, 600_000).optional(),
  MAX_BLOCK_RANGE: envField.int(1, 10_000_000).optional(),
  CONCURRENCY: envField.int(1, 64).optional(),
  REORG_WINDOW: envField.int(1, 100_000).optional(),
  MARK_INTERVAL_BLOCKS: envField.int(0).optional(),
  MARK_MIN_INTERVAL_MS: envField.int(0).optional(),
  METRICS_PORT: envField.port().optional(),
  /** How the valuation lens runs: auto (default: probed), override, or create (see packages/chain valuation). */
  VALUATION_LENS: z
    .enum(VALUATION_LENSES, { error: 'expected auto, override (state override) or create (creation code)' })
    .optional(),
  /** Default heartbeat of price feeds, seconds: older prices are flagged stale. */
  FEED_HEARTBEAT_SECONDS: envField.int(1, 31_536_000).optional(),
  /** Per-feed heartbeats: `0xFEED=SECONDS,0xFEED=SECONDS`. */
  FEED_HEARTBEATS: z
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
});

export type IndexerEnv = z.output<typeof indexerEnvSchema>;

export function loadIndexerEnv(env: Env = process.env): IndexerEnv {
  return createConfig(indexerEnvSchema, env);
}

const int = (min = 0, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);

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
  rpcTimeoutMs: int(100, 600_000).default(30_000),
  /** Read from the node when omitted. */
  chainId: int(1).optional(),
  factory: address,
  /** Default: the factory's deploymentBlock. Must not be above the factory's first vault. */
  startBlock: int().optional(),
  /** Blocks behind the head the indexer stays. */
  confirmations: int(0, 10_000).default(0),
  /**
   * Last block to index. The indexer publishes and checkpoints up to and including it (waiting
   * until it is `confirmations` deep when it is not yet), checks once more that the checkpointed
   * block is still canonical, closes its connections and resolves `done`, instead of following
   * the head. Must be ≥ the start block and ≥ a stored checkpoint (start() refuses otherwise).
   */
  endBlock: int().optional(),
  kafka: z.object({
    brokers: z.array(z.string().min(1)).min(1).readonly(),
    topic: z.string().min(1).default('vault-records'),
    /** Partitions when the indexer creates the topic. */
    partitions: int(1, 1024).default(12),
    /** Replication factor of the topic the indexer creates; unset: 3, or 1 on a single broker. */
    replicationFactor: int(1, 16).optional(),
    /**
     * SASL/TLS for every Kafka client of this process (the publisher thread included); unset
     * leaves what `setDefaultLogSecurity` set (plaintext by default).
     */
    security: z.custom<LogSecurity>().optional(),
    /** How records are written to the log (packages/domain records/codec.ts). */
    encoding: z.enum(RECORD_ENCODINGS).default(DEFAULT_RECORD_ENCODING),
  }),
  databaseUrl: z.string().min(1),
  /** Postgres schema holding indexer_checkpoint & co. */
  schema: z.string().min(1).default('vault_yield'),
  pollIntervalMs: int(10, 600_000).default(1000),
  /** Largest getLogs range (blocks); the range adapts below it. */
  maxBlockRange: int(1, 10_000_000).default(10_000),
  /** getLogs ranges fetched at once. */
  concurrency: int(1, 64).default(4),
  /** Block hashes kept for reorg detection. */
  reorgWindow: int(1, 100_000).default(128),
  /** Mark cadence: at most one mark per vault per N blocks / M ms of block time (flips excepted). */
  mark: z.object({ intervalBlocks: int().default(10), minIntervalMs: int().default(0) }).prefault({}),
  /** Serve /metrics on this port. */
  metricsPort: int(0, 65_535).optional(),
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
      default: int(1, 31_536_000).default(3600),
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
  valuationLens: z.enum(VALUATION_LENSES).default('auto'),
  /** A streak of failed steps halts the indexer once it is 8 long and this old (ms). */
  giveUpAfterMs: int(0).default(120_000),
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
    schema: env.PROJECTION_SCHEMA,
    pollIntervalMs: env.POLL_INTERVAL_MS,
    maxBlockRange: env.MAX_BLOCK_RANGE,
    concurrency: env.CONCURRENCY,
    reorgWindow: env.REORG_WINDOW,
    mark: { intervalBlocks: env.MARK_INTERVAL_BLOCKS, minIntervalMs: env.MARK_MIN_INTERVAL_MS },
    metricsPort: env.METRICS_PORT,
    heartbeats: { default: env.FEED_HEARTBEAT_SECONDS, byFeed: env.FEED_HEARTBEATS },
    valuationLens: env.VALUATION_LENS,
    logger,
  };
}
