import type { Logger } from '@vault-yield/common';
import type { Pool } from '@vault-yield/store';
import type { ReaderConfig } from '../config.js';

/** What route modules get from the factory. */
export interface RouteDeps {
  pool: Pool;
  config: ReaderConfig;
  log: Logger;
}
