import { createLogger } from '@vault-yield/common';
import { describe, expect, it } from 'vitest';
import { loadProjectorEnv, projectorConfigFromEnv } from './config.js';

const base = {
  KAFKA_BROKERS: '127.0.0.1:9092',
  DATABASE_URL: 'postgres://writer@127.0.0.1:5432/vault_yield',
};
const logger = createLogger({ name: 'test', level: 'silent' });

describe('projector config: every variable reaches the config shape (main reads the env nowhere else)', () => {
  it('FOLLOW_LIVE: the views schema to follow and how often it is read; unset: pinned', () => {
    expect(projectorConfigFromEnv(loadProjectorEnv(base), logger).follow).toBeNull();
    const follow = projectorConfigFromEnv(
      loadProjectorEnv({
        ...base,
        FOLLOW_LIVE: 'true',
        VIEWS_SCHEMA: 'vy_views',
        FOLLOW_LIVE_INTERVAL_MS: '2500',
      }),
      logger,
    ).follow;
    expect(follow).toEqual({ viewsSchema: 'vy_views', intervalMs: 2_500 });
  });
});
