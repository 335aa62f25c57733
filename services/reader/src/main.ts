import { ConfigError, createContext } from '@vault-yield/common';
import { readerConfigFromEnv } from './config.js';
import { createReader } from './index.js';

let config: ReturnType<typeof readerConfigFromEnv>;
try {
  config = readerConfigFromEnv();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(2);
}
// The process's one context: its logger, registry, shutdown and Kafka connection (the freshness
// probe's, when KAFKA_BROKERS is set).
const kafka = config.freshness.kafka;
const ctx = createContext({
  service: 'reader',
  config,
  log: config.logger ?? { level: config.logLevel, format: config.logFormat },
  kafka: kafka ? { brokers: kafka.brokers, ...kafka.security, connectBudgetMs: null } : null,
});
const reader = createReader(config, ctx);
await reader.start();
ctx.shutdown(() => reader.stop());
