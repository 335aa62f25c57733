import { ConfigError, createContext, kafkaConnection } from '@vault-yield/common';
import { loadProjectorEnv, type ProjectorEnv, projectorConfigFromEnv } from './config.js';
import { followLiveProjections, startProjections } from './projections/index.js';

let env: ProjectorEnv;
try {
  env = loadProjectorEnv();
} catch (err) {
  // One line naming every bad variable (secrets redacted), exit 2: no stack trace to bury it.
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(2);
}
// The process's one context: every Kafka client (the strategy side's too) connects with its
// SASL/TLS; one logger, one registry, one shutdown.
const ctx = createContext({
  service: 'projector',
  config: env,
  log: { level: env.LOG_LEVEL, format: env.LOG_FORMAT },
  kafka: kafkaConnection(env),
});
const logger = ctx.log;
const config = projectorConfigFromEnv(env, logger);
// FOLLOW_LIVE: the live schema of VIEWS_SCHEMA, moving at each switch; otherwise pinned.
const projections = config.follow
  ? followLiveProjections(config, config.follow, ctx)
  : startProjections(config, ctx);

ctx.shutdown(() => projections.stop());
projections.started.catch((err: unknown) => {
  logger.fatal({ err }, 'projector failed to start');
  process.exit(1);
});
