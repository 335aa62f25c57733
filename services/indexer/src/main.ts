import { ConfigError, createContext, kafkaConnection } from '@vault-yield/common';
import {
  createIndexer,
  followLiveIndexer,
  IndexerHaltError,
  indexerConfigFromEnv,
  loadIndexerEnv,
} from './index.js';

/**
 * The indexer process: env → one context (logger, registry, Kafka connection, shutdown) →
 * createIndexer; SIGINT/SIGTERM finish the batch in flight and exit. With END_BLOCK, it exits 0
 * once that block is checkpointed. FOLLOW_LIVE: it publishes the log the live projection of
 * VIEWS_SCHEMA folds, moving to a reindex's log once it is switched live.
 */
let env: ReturnType<typeof loadIndexerEnv>;
try {
  env = loadIndexerEnv();
} catch (err) {
  // One line naming every bad variable (secrets redacted), exit 2: no stack trace to bury it.
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(2);
}
const ctx = createContext({
  service: 'indexer',
  config: env,
  log: { level: env.LOG_LEVEL, format: env.LOG_FORMAT },
  kafka: kafkaConnection(env),
});
const logger = ctx.log;
const config = indexerConfigFromEnv(env, logger);
const indexer = env.FOLLOW_LIVE
  ? followLiveIndexer(config, { viewsSchema: env.VIEWS_SCHEMA, intervalMs: env.FOLLOW_LIVE_INTERVAL_MS }, ctx)
  : createIndexer(config, ctx);
ctx.shutdown(() => indexer.stop());
try {
  await indexer.start();
} catch (err) {
  // A refusal (a checkpoint of another topic, an end block below the checkpoint): its message says
  // what to do, a stack trace would only bury it. Other start failures propagate as before.
  if (!(err instanceof IndexerHaltError)) throw err;
  logger.fatal(err.message);
  process.stderr.write(`indexer refused to start: ${err.message}\n`);
  process.exit(2);
}
try {
  await indexer.done;
} catch {
  // Halted (bad log, reorg deeper than the window, …): already logged with its reason.
  await indexer.stop().catch(() => {});
  process.exit(2);
}
// Resolved: stopped by a signal (onShutdown exits), or the end block is checkpointed.
if (indexer.status().ended) {
  await indexer.stop();
  process.exit(0);
}
