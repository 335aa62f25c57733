import { baseConfigSchema, createConfig, type Env, envField, kafkaSecurityShape } from '@vault-yield/common';
import { z } from 'zod';

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'expected an address: 0x followed by 40 hex digits')
  .transform((a) => a.toLowerCase() as `0x${string}`);

/** Environment of the indexer process (see README / main.ts). */
export const indexerEnvSchema = baseConfigSchema.extend({
  RPC_URL: envField.httpUrl(),
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
  CONFIRMATIONS: envField.int(0, 10_000).default(0),
  KAFKA_BROKERS: envField.brokers(),
  ...kafkaSecurityShape,
  KAFKA_TOPIC: envField.topic().default('vault-records'),
  /** Partitions when the indexer creates the topic. */
  KAFKA_PARTITIONS: envField.int(1, 1024).default(12),
  /** Time-out of one RPC request; a timed-out call is retried (smaller ranges for eth_getLogs). */
  RPC_TIMEOUT_MS: envField.int(100, 600_000).default(30_000),
  /** Replication factor when the indexer creates the topic: 1 locally; 3 in production. */
  /** Replication factor of the topic the indexer creates; unset: 3, or 1 on a single broker. */
  KAFKA_REPLICATION_FACTOR: envField.int(1, 16).optional(),
  DATABASE_URL: envField.postgresUrl(),
  PROJECTION_SCHEMA: envField.identifier().default('vault_yield'),
  POLL_INTERVAL_MS: envField.int(10, 600_000).default(1000),
  MAX_BLOCK_RANGE: envField.int(1, 10_000_000).default(10_000),
  CONCURRENCY: envField.int(1, 64).default(4),
  REORG_WINDOW: envField.int(1, 100_000).default(128),
  MARK_INTERVAL_BLOCKS: envField.int(0).default(10),
  MARK_MIN_INTERVAL_MS: envField.int(0).default(0),
  METRICS_PORT: envField.port().optional(),
  /** Default heartbeat of price feeds, seconds: older prices are flagged stale. */
  FEED_HEARTBEAT_SECONDS: envField.int(1, 31_536_000).default(3600),
  /** Per-feed heartbeats: `0xFEED=SECONDS,0xFEED=SECONDS`. */
  FEED_HEARTBEATS: z
    .string()
    .default('')
    .transform((v, ctx) => {
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
