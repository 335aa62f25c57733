import { describe, expect, it } from 'vitest';
import { readerConfigFromEnv } from './config.js';

const DB = { DATABASE_URL: 'postgres://r@127.0.0.1/db' };

describe('reader configuration', () => {
  it('asks for a direct URL behind a transaction-mode pooler (its streams LISTEN) and keeps it', () => {
    expect(() => readerConfigFromEnv({ ...DB, DATABASE_POOLING: 'transaction' })).toThrow(
      /DATABASE_DIRECT_URL: required with DATABASE_POOLING=transaction \(the live streams LISTEN/,
    );
    const direct = 'postgres://r@127.0.0.1:5432/db';
    const c = readerConfigFromEnv({ ...DB, DATABASE_POOLING: 'transaction', DATABASE_DIRECT_URL: direct });
    expect(c.pooling).toBe('transaction');
    expect(c.directUrl).toBe(direct);
    expect(readerConfigFromEnv(DB).directUrl).toBeUndefined();
  });
});
