import { ConfigError, createLogger, kafkaSecurity, onShutdown } from '@vault-yield/common';
import { setDefaultLogSecurity } from '@vault-yield/log';
import { loadProjectorEnv, type ProjectorEnv, projectorConfigFromEnv } from './config.js';
import { startProjections } from './projections/index.js';

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
const projections = startProjections(projectorConfigFromEnv(env, logger));

onShutdown(logger, () => projections.stop());
projections.started.catch((err: unknown) => {
  logger.fatal({ err }, 'projector failed to start');
  process.exit(1);
});
