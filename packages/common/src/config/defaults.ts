/**
 * Names and defaults every service shares, declared once: the env schemas of the indexer,
 * projector, reader and cli, and their camelCase configs, take them from here.
 */
export const CONFIG_DEFAULTS = {
  /** Postgres schema holding the projection tables (PROJECTION_SCHEMA). */
  projectionSchema: 'vault_yield',
  /** Schema of the views the reader reads (VIEWS_SCHEMA). */
  viewsSchema: 'vault_yield_api',
  /** The vault event log (KAFKA_TOPIC). */
  recordsTopic: 'vault-records',
  /** The strategy topics (SCREEN_TOPIC, CATALOGUE_TOPIC). */
  screenTopic: 'screen-results',
  catalogueTopic: 'strategy-catalogue',
  /** Consumer group of the vault projection (CONSUMER_GROUP), also the projector's Kafka client id. */
  projectorGroup: 'vault-yield-projector',
  /** Daily returns a strategy needs before liveApr/sigma are published (MIN_DAILY_RETURNS). */
  minDailyReturns: 30,
  /** Where metrics servers bind (METRICS_HOST): loopback, so figures are not public by default. */
  metricsHost: '127.0.0.1',
} as const;

/** The one bound of MIN_DAILY_RETURNS / minDailyReturns (sigma needs two returns). */
export const MIN_DAILY_RETURNS_RANGE = { min: 2, max: 10_000 } as const;
