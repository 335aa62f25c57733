import { createLogger, kafkaSecurity, onShutdown } from '@vault-yield/common';
import { setDefaultLogSecurity } from '@vault-yield/log';
import { createPgPool } from '@vault-yield/store';
import { loadProjectorConfig } from './config.js';
import { createProjector } from './index.js';
import { createMarketProjector } from './market/index.js';

const config = loadProjectorConfig();
// Every Kafka client of the process (the market projector's too) connects with these.
setDefaultLogSecurity(kafkaSecurity(config));
const logger = createLogger({ name: 'projector', level: config.LOG_LEVEL });
const projector = createProjector({ ...config, logger });
const marketPool = config.MARKET_PROJECTION
  ? createPgPool({
      url: config.DATABASE_URL,
      schema: config.PROJECTION_SCHEMA,
      applicationName: 'vault-yield-market',
      max: 2,
    })
  : null;
const market = marketPool
  ? createMarketProjector({
      brokers: config.KAFKA_BROKERS,
      pool: marketPool,
      logger: logger.child({ component: 'market' }),
      screenTopic: config.SCREEN_TOPIC,
      catalogueTopic: config.CATALOGUE_TOPIC,
      groupId: `${config.CONSUMER_GROUP}-market`,
      statsIntervalMs: config.STATS_INTERVAL_MS,
      minDailyReturns: config.MIN_DAILY_RETURNS,
    })
  : null;

onShutdown(logger, async () => {
  await Promise.all([projector.stop(), market?.stop()]);
  await marketPool?.end();
});
Promise.all([projector.start(), market?.start()]).catch((err: unknown) => {
  logger.fatal({ err }, 'projector failed to start');
  process.exit(1);
});
