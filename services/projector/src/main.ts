import { ConfigError, createLogger, kafkaSecurity, onShutdown } from '@vault-yield/common';
import { setDefaultLogSecurity } from '@vault-yield/log';
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
// Every Kafka client of the process (the strategy side's too) connects with these.
setDefaultLogSecurity(kafkaSecurity(env));
const logger = createLogger({ name: 'projector', level: env.LOG_LEVEL, format: env.LOG_FORMAT });
const config = projectorConfigFromEnv(env, logger);
// FOLLOW_LIVE: the live schema of VIEWS_SCHEMA, moving at each switch; otherwise pinned.
const projections = env.FOLLOW_LIVE
  ? followLiveProjections(config, { viewsSchema: env.VIEWS_SCHEMA, intervalMs: env.FOLLOW_LIVE_INTERVAL_MS })
  : startProjections(config);

onShutdown(logger, () => projections.stop());
projections.started.catch((err: unknown) => {
  logger.fatal({ err }, 'projector failed to start');
  process.exit(1);
});
