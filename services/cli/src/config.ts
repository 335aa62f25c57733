/**
 * The cli's one environment schema, `cliEnvSchema`: every variable a command reads, with its
 * format, default and text. main.ts reads what the process needs of it once (Kafka's security,
 * the connect budget) and hands each command a context whose config is the command's pick of it
 * (`commandEnv`), read once when the command first asks; so every command reads a variable the
 * same way with the same default. Also what the README's generated configuration table and the
 * tests that hold compose to it read (scripts/config-table.ts, test/compose.test.ts).
 */
import { doc, envField, kafkaEnv, sharedEnv } from '@vault-yield/common';
// The indexer's env schema only (zod, no viem): the package's index loads the whole indexer.
import { indexerEnvSchema } from '@vault-yield/indexer/config';
import { PROJECTOR_BATCH_DEFAULTS } from '@vault-yield/projector';
import { webhooksEnvSchema } from '@vault-yield/webhooks';
import { z } from 'zod';

export { webhooksEnvSchema };

const logLevel = (byDefault: 'info' | 'warn') =>
  doc(
    envField.logLevel().default(byDefault),
    'pino level (`migrate`, `dead-letters`, `dev`: `info`; the other commands: `warn`)',
  );

/** The operator variables (the README's `cli` column, with the indexer's below). */
const opsFields = {
  DATABASE_URL: sharedEnv.DATABASE_URL,
  MIGRATE_DATABASE_URL: sharedEnv.MIGRATE_DATABASE_URL,
  WRITER_ROLE: sharedEnv.WRITER_ROLE.optional(),
  ...kafkaEnv,
  KAFKA_TOPIC: sharedEnv.KAFKA_TOPIC,
  /** A one-shot command's wait for a broker to answer before its one-line failure. */
  KAFKA_CONNECT_BUDGET_MS: doc(
    envField.int(0).default(5_000),
    "how long a command (not `dev`) waits for a broker of `KAFKA_BROKERS` to answer before it fails in one line, ms (0 = the Kafka client's own retries, ≈ 40 s); raise it on a slow link",
  ),
  /** Schema of the views the reader reads; its target is the live projection schema. */
  VIEWS_SCHEMA: sharedEnv.VIEWS_SCHEMA,
  /** The projection schema that is live before any switch (and the indexer's schema by default). */
  PROJECTION_SCHEMA: sharedEnv.PROJECTION_SCHEMA,
  /** Group of the live projector (status, verify), when the live schema has no build record. */
  CONSUMER_GROUP: sharedEnv.CONSUMER_GROUP,
  READER_ROLE: sharedEnv.READER_ROLE.optional(),
  SCREEN_TOPIC: sharedEnv.SCREEN_TOPIC,
  CATALOGUE_TOPIC: sharedEnv.CATALOGUE_TOPIC,
  MIN_DAILY_RETURNS: sharedEnv.MIN_DAILY_RETURNS,
  /** Partitions folded at once by the build's projector, and its Postgres pool. */
  PROJECTOR_CONCURRENCY: doc(
    envField.int(1, 64).default(PROJECTOR_BATCH_DEFAULTS.concurrency),
    'partitions one projector instance (or build) folds at once (their Postgres transactions overlap)',
  ),
  PG_POOL_MAX: doc(
    envField.int(1, 100).default(6),
    "Postgres connections at most (a projector's, or a build's)",
  ),
  /** Upper bound of one partition's batch (bytes). */
  PROJECTOR_MAX_BATCH_BYTES: doc(
    envField.int(64 * 1024).default(PROJECTOR_BATCH_DEFAULTS.maxBatchBytes),
    "upper bound of one partition's batch, bytes (kafkajs `maxBytesPerPartition`)",
  ),
  LOG_LEVEL: logLevel('warn'),
  LOG_FORMAT: doc(
    z.enum(['auto', 'json', 'pretty']).default('auto'),
    '`auto`: one pretty line per log line on a terminal, JSON otherwise; `json` or `pretty` force one',
  ),
  /** Schema of the live indexer's checkpoint (default PROJECTION_SCHEMA). */
  INDEXER_SCHEMA: doc(
    envField.identifier().optional(),
    "schema holding the live indexer's checkpoint (`status`, `reindex`, `republish`)",
    '`PROJECTION_SCHEMA`',
  ),
  /** `dev`: prefix of the demo's topics and consumer groups. */
  DEV_KAFKA_PREFIX: doc(
    envField.identifier().default('dev'),
    "prefix of the demo's topics and consumer groups (two demos on one broker)",
  ),
  /** `dev`: the reader's port (`--port` wins). */
  PORT: doc(envField.port().default(8080), 'listen port'),
  /** `dev`: admin URL that may create the database and roles. */
  DATABASE_ADMIN_URL: doc(
    z.string().min(1).default('postgres://postgres@127.0.0.1:5432/postgres'),
    'admin URL that may create the database and its roles',
  ),
  /** `dev`: the database it creates. */
  DATABASE_NAME: doc(z.string().min(1).default('vault_yield_dev'), 'the demo database'),
};

/** The indexer's settings a log is cut by (reindex cuts the new log exactly like the live one). */
const CUT_LIKE_THE_LIVE_LOG = {
  RPC_URL: true,
  CHAIN_ID: true,
  FACTORY_ADDRESS: true,
  START_BLOCK: true,
  CONFIRMATIONS: true,
  MAX_BLOCK_RANGE: true,
  CONCURRENCY: true,
  REORG_WINDOW: true,
  MARK_INTERVAL_BLOCKS: true,
  MARK_MIN_INTERVAL_MS: true,
  FEED_HEARTBEAT_SECONDS: true,
  FEED_HEARTBEATS: true,
  VALUATION_LENS: true,
} as const;

/**
 * The one environment schema of the cli: the operator variables, the live indexer's settings a
 * reindex, a republish and an audit cut the chain with (the indexer's own fields and defaults),
 * and the reader an audit checks.
 */
export const cliEnvSchema = z.object({
  ...opsFields,
  ...indexerEnvSchema.pick({ ...CUT_LIKE_THE_LIVE_LOG, RECORD_ENCODING: true }).shape,
  READER_URL: doc(
    envField.httpUrl(),
    'the reader whose served snapshots `audit` checks (GET /v1/vaults?chainId=, /v1/vault/{id}/snapshot of the chain its node is on), e.g. http://reader:8080',
  ),
  METRICS_PORT: sharedEnv.METRICS_PORT.optional(),
  METRICS_HOST: sharedEnv.METRICS_HOST,
});
export type CliEnv = z.output<typeof cliEnvSchema>;
const cli = cliEnvSchema.shape;

/** The operator variables alone (the README's table: the cli's column starts with them). */
export const opsEnvSchema = z.object(opsFields);

/** The Kafka security variables, picked from the cli's schema. */
export const kafkaSecurityPick = {
  KAFKA_SASL_MECHANISM: true,
  KAFKA_SASL_USERNAME: true,
  KAFKA_SASL_PASSWORD: true,
  KAFKA_SSL: true,
  KAFKA_SSL_CA_FILE: true,
  KAFKA_SSL_CERT_FILE: true,
  KAFKA_SSL_KEY_FILE: true,
  KAFKA_SASL_ALLOW_PLAINTEXT: true,
} as const;

/** What the process reads whatever the command (main.ts): Kafka's security and the connect budget. */
export const processEnvSchema = cliEnvSchema.pick({ ...kafkaSecurityPick, KAFKA_CONNECT_BUDGET_MS: true });

/** LOG_LEVEL of the commands that log at `info` by default (migrate, dead-letters, dev). */
export const infoLogLevel = { LOG_LEVEL: logLevel('info') };

/** What the operator commands that build projections read (rebuild, verify). */
export const buildEnvSchema = cliEnvSchema.pick({
  DATABASE_URL: true,
  MIGRATE_DATABASE_URL: true,
  WRITER_ROLE: true,
  KAFKA_BROKERS: true,
  ...kafkaSecurityPick,
  KAFKA_TOPIC: true,
  VIEWS_SCHEMA: true,
  PROJECTION_SCHEMA: true,
  CONSUMER_GROUP: true,
  READER_ROLE: true,
  SCREEN_TOPIC: true,
  CATALOGUE_TOPIC: true,
  MIN_DAILY_RETURNS: true,
  PROJECTOR_CONCURRENCY: true,
  PG_POOL_MAX: true,
  PROJECTOR_MAX_BATCH_BYTES: true,
  LOG_LEVEL: true,
  LOG_FORMAT: true,
});
export type OpsEnv = z.output<typeof buildEnvSchema>;

/**
 * `vault-yield reindex`: the operator environment plus the live indexer's own settings, with the
 * indexer's defaults: the new log is cut exactly like the live one (mark cadence, confirmations,
 * start block).
 */
export const reindexEnvSchema = z.object({
  ...buildEnvSchema.shape,
  ...cliEnvSchema.pick(CUT_LIKE_THE_LIVE_LOG).shape,
  /** Schema of the live indexer's checkpoint (default PROJECTION_SCHEMA): never reused. */
  INDEXER_SCHEMA: cli.INDEXER_SCHEMA,
});

/** `vault-yield republish`. */
export const republishEnvSchema = z.object({
  ...cliEnvSchema.pick({
    DATABASE_URL: true,
    KAFKA_BROKERS: true,
    KAFKA_TOPIC: true,
    PROJECTION_SCHEMA: true,
    LOG_LEVEL: true,
    ...kafkaSecurityPick,
    /** Schema of the indexer's tables (default PROJECTION_SCHEMA). */
    INDEXER_SCHEMA: true,
  }).shape,
  ...cliEnvSchema.pick({
    RPC_URL: true,
    CHAIN_ID: true,
    FACTORY_ADDRESS: true,
    FEED_HEARTBEAT_SECONDS: true,
    VALUATION_LENS: true,
    FEED_HEARTBEATS: true,
    RECORD_ENCODING: true,
  }).shape,
});

/** `vault-yield audit`: the chain, the reader it checks, and --every's metrics. */
export const auditEnvSchema = z.object({
  RPC_URL: cli.RPC_URL,
  /** Where the pool's Mint logs for a vault are searched from (the indexer's first block). */
  START_BLOCK: cli.START_BLOCK,
  READER_URL: cli.READER_URL,
  METRICS_PORT: cli.METRICS_PORT,
  METRICS_HOST: cli.METRICS_HOST,
  LOG_LEVEL: cli.LOG_LEVEL,
  LOG_FORMAT: cli.LOG_FORMAT,
});
export type AuditEnv = z.output<typeof auditEnvSchema>;

/** `vault-yield migrate`. */
export const migrateConfigSchema = cliEnvSchema
  .pick({
    DATABASE_URL: true,
    MIGRATE_DATABASE_URL: true,
    PROJECTION_SCHEMA: true,
    READER_ROLE: true,
    WRITER_ROLE: true,
  })
  .extend(infoLogLevel);

/** `vault-yield dead-letters`. */
export const deadLettersEnvSchema = cliEnvSchema
  .pick({ DATABASE_URL: true, VIEWS_SCHEMA: true, PROJECTION_SCHEMA: true })
  .extend(infoLogLevel);

/** `vault-yield dev`: its brokers optional (without them it starts one). */
export const devEnvSchema = cliEnvSchema
  .pick({
    PROJECTION_SCHEMA: true,
    VIEWS_SCHEMA: true,
    DEV_KAFKA_PREFIX: true,
    PORT: true,
    DATABASE_ADMIN_URL: true,
    DATABASE_NAME: true,
    LOG_FORMAT: true,
  })
  .extend({ ...infoLogLevel, KAFKA_BROKERS: cli.KAFKA_BROKERS.optional() });

/** `vault-yield log`. */
export const logEnvSchema = cliEnvSchema.pick({
  KAFKA_BROKERS: true,
  ...kafkaSecurityPick,
  KAFKA_TOPIC: true,
  LOG_LEVEL: true,
});

/** `vault-yield publish`: DATABASE_URL optional (with it, the topic is the one the live projection reads). */
export const publishEnvSchema = cliEnvSchema
  .pick({
    KAFKA_BROKERS: true,
    ...kafkaSecurityPick,
    SCREEN_TOPIC: true,
    CATALOGUE_TOPIC: true,
    VIEWS_SCHEMA: true,
    PROJECTION_SCHEMA: true,
  })
  .extend({ DATABASE_URL: cli.DATABASE_URL.optional() });
export type PublishEnv = z.output<typeof publishEnvSchema>;

/** `vault-yield status`: without brokers it reports no lag; without RPC_URL no chain head. */
export const statusEnvSchema = cliEnvSchema
  .pick({
    DATABASE_URL: true,
    ...kafkaSecurityPick,
    VIEWS_SCHEMA: true,
    PROJECTION_SCHEMA: true,
    KAFKA_TOPIC: true,
    /** Schema holding indexer_checkpoint (default: PROJECTION_SCHEMA, where the indexer writes). */
    INDEXER_SCHEMA: true,
  })
  .extend({
    KAFKA_BROKERS: cli.KAFKA_BROKERS.optional(),
    RPC_URL: envField.httpUrl().optional(),
    /** Where the webhook secrets are (default PROJECTION_SCHEMA), as for `vault-yield webhooks`. */
    WEBHOOKS_SCHEMA: webhooksEnvSchema.shape.WEBHOOKS_SCHEMA,
  });

/** What a command that reads nothing of the environment (`webhooks`: the webhooks service's own) picks. */
export const noEnvSchema = z.object({});

/**
 * The topic variables the environment sets, as given (unset and empty ones absent: their
 * defaults do not count).
 */
export const namedTopicsSchema = z.object({
  KAFKA_TOPIC: z.string().optional(),
  SCREEN_TOPIC: z.string().optional(),
  CATALOGUE_TOPIC: z.string().optional(),
});
