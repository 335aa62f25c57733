import { ConfigError, onShutdown } from '@vault-yield/common';
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
const reader = createReader(config);
await reader.start();
onShutdown(reader.log, () => reader.stop());
