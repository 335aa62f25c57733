import { z } from 'zod';
import { kafkaSecurityShape } from '../security/index.js';
import { CONFIG_DEFAULTS, MIN_DAILY_RETURNS_RANGE } from './defaults.js';
import { doc } from './doc.js';
import { envField } from './index.js';

/**
 * The env fields more than one process reads, each declared once with its default and its text:
 * every service's env schema (indexer, projector, reader, the cli's ops schema) takes them from here.
 */
export const sharedEnv = {
  DATABASE_URL: doc(
    envField.postgresUrl(),
    "Postgres URL (writer role for indexer/projector/migrate, read-only role for the reader). TLS by its parameters: `sslmode=verify-full&sslrootcert=/path/ca.pem` (certificate and host verified against that CA file; without `sslrootcert`, the system CAs), `sslmode=no-verify` (encrypted, unverified) or `sslmode=disable`. `require`, `verify-ca` and `prefer` are refused: node-postgres 8 does not give them libpq's meaning",
  ),
  DATABASE_POOLING: doc(
    z.enum(['session', 'transaction']).default('session'),
    "how `DATABASE_URL`'s connections are pooled: `session` (Postgres itself, or PgBouncer in session mode): `search_path` and `statement_timeout` are sent at connect; `transaction` (PgBouncer `pool_mode=transaction`): nothing is set per connection — the role's settings must give them (`alter role … in database … set`, checked at start) — no query is a named prepared statement, and LISTEN goes through `DATABASE_DIRECT_URL`",
  ),
  DATABASE_DIRECT_URL: doc(
    envField.postgresUrl().optional(),
    "a URL straight to Postgres (not through a transaction-mode pooler) for the connections that hold session state: the reader's LISTEN for live streams, the webhooks deliverer's lock and LISTEN (required with `DATABASE_POOLING=transaction`)",
    '`DATABASE_URL`',
  ),
  MIGRATE_DATABASE_URL: doc(
    envField.postgresUrl().optional(),
    'URL of the migrator role (owner of the projection schemas: DDL) for `migrate` and the commands that create, switch or drop schemas (`rebuild`, `reindex`); the writer role `DATABASE_URL` names has DML only. Connect directly or through a session-mode pool',
    '`DATABASE_URL`',
  ),
  WRITER_ROLE: doc(
    envField.identifier(),
    'role granted DML (select, insert, update, delete) on the tables `migrate` and `rebuild` create, now and by default privileges (the runtime writer: indexer, projector)',
    'unset: no grants',
  ),
  PROJECTION_SCHEMA: doc(
    envField.identifier().default(CONFIG_DEFAULTS.projectionSchema),
    'schema holding the projection tables',
  ),
  VIEWS_SCHEMA: doc(
    envField.identifier().default(CONFIG_DEFAULTS.viewsSchema),
    'schema of the views the reader reads (`rebuild switch` points them at the live projection schema)',
  ),
  KAFKA_BROKERS: doc(envField.brokers(), 'comma-separated `host:port` list'),
  KAFKA_SASL_MECHANISM: doc(
    kafkaSecurityShape.KAFKA_SASL_MECHANISM,
    '`PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512`; needs the two below',
    'unset: no SASL',
  ),
  KAFKA_SASL_USERNAME: doc(
    kafkaSecurityShape.KAFKA_SASL_USERNAME,
    'SASL user name (required with a mechanism, refused without one)',
  ),
  KAFKA_SASL_PASSWORD: doc(
    kafkaSecurityShape.KAFKA_SASL_PASSWORD,
    'SASL password (required with a mechanism, refused without one; never echoed in errors)',
  ),
  KAFKA_SSL: doc(
    kafkaSecurityShape.KAFKA_SSL,
    'TLS to the brokers, verified against the system CAs or `KAFKA_SSL_CA_FILE`',
  ),
  KAFKA_SSL_CA_FILE: doc(
    kafkaSecurityShape.KAFKA_SSL_CA_FILE,
    "PEM file of the CA that signed the brokers' certificates (must be readable; needs `KAFKA_SSL=true`)",
    'system CAs',
  ),
  KAFKA_SSL_CERT_FILE: doc(
    kafkaSecurityShape.KAFKA_SSL_CERT_FILE,
    'PEM client certificate for brokers that require one (mTLS, `ssl.client.auth=required`); needs `KAFKA_SSL_KEY_FILE` and `KAFKA_SSL=true`',
    'unset: no client certificate',
  ),
  KAFKA_SSL_KEY_FILE: doc(
    kafkaSecurityShape.KAFKA_SSL_KEY_FILE,
    "PEM private key of `KAFKA_SSL_CERT_FILE` (unencrypted; keep the file readable by the service's user alone)",
    'unset',
  ),
  KAFKA_SASL_ALLOW_PLAINTEXT: doc(
    kafkaSecurityShape.KAFKA_SASL_ALLOW_PLAINTEXT,
    'allow SASL `PLAIN` without `KAFKA_SSL` (the password then crosses the network in clear: a private network or a local test only); refused otherwise',
  ),
  KAFKA_TOPIC: doc(
    envField.topic().default(CONFIG_DEFAULTS.recordsTopic),
    "the vault event log (kept forever: an existing topic with `retention.ms`/`retention.bytes` other than -1 or with `cleanup.policy` compact is refused at start, with the `kafka-configs.sh` command that fixes it); the indexer records it with its checkpoint and refuses to start on a checkpoint of another topic (give a new topic its own `PROJECTION_SCHEMA`, e.g. reindex's namespace)",
  ),
  CONSUMER_GROUP: doc(
    z.string().min(1).max(200).default(CONFIG_DEFAULTS.projectorGroup),
    'consumer group id of the vault projection (its offsets are stored with the projection)',
  ),
  SCREEN_TOPIC: doc(
    envField.topic().default(CONFIG_DEFAULTS.screenTopic),
    'topic of the screen results (strategy side)',
  ),
  CATALOGUE_TOPIC: doc(
    envField.topic().default(CONFIG_DEFAULTS.catalogueTopic),
    'topic of the strategy catalogue (strategy side)',
  ),
  MIN_DAILY_RETURNS: doc(
    envField
      .int(MIN_DAILY_RETURNS_RANGE.min, MIN_DAILY_RETURNS_RANGE.max)
      .default(CONFIG_DEFAULTS.minDailyReturns),
    'daily returns a strategy needs before its `liveApr`/`sigma` are published',
  ),
  METRICS_HOST: doc(
    z.string().min(1).default(CONFIG_DEFAULTS.metricsHost),
    'address the metrics server (`METRICS_PORT`) binds to; widen it (`0.0.0.0`) only where the port is reachable by the scraper alone',
  ),
  METRICS_PORT: doc(
    envField.port(),
    'serve Prometheus metrics on this port (`/metrics`)',
    'unset: no metrics server',
  ),
  READER_ROLE: doc(
    envField.identifier(),
    'role granted `select` on the views and the projection schemas they point at (rebuild, migrate)',
    'unset: no grants',
  ),
} as const;

/** The Kafka variables of every process that talks to the brokers (indexer, projector, the CLI's commands). */
export const kafkaEnv = {
  KAFKA_BROKERS: sharedEnv.KAFKA_BROKERS,
  KAFKA_SASL_MECHANISM: sharedEnv.KAFKA_SASL_MECHANISM,
  KAFKA_SASL_USERNAME: sharedEnv.KAFKA_SASL_USERNAME,
  KAFKA_SASL_PASSWORD: sharedEnv.KAFKA_SASL_PASSWORD,
  KAFKA_SSL: sharedEnv.KAFKA_SSL,
  KAFKA_SSL_CA_FILE: sharedEnv.KAFKA_SSL_CA_FILE,
  KAFKA_SSL_CERT_FILE: sharedEnv.KAFKA_SSL_CERT_FILE,
  KAFKA_SSL_KEY_FILE: sharedEnv.KAFKA_SSL_KEY_FILE,
  KAFKA_SASL_ALLOW_PLAINTEXT: sharedEnv.KAFKA_SASL_ALLOW_PLAINTEXT,
} as const;
