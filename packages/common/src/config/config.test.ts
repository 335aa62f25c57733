import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createConfig, envField, requireDirectUrl } from './index.js';

const schema = z.object({
  KAFKA_BROKERS: envField.brokers(),
  DATABASE_URL: envField.postgresUrl(),
  PORT: envField.port().default(8080),
  FLAG: envField.bool().default(false),
});

describe('createConfig', () => {
  it('parses valid values and applies defaults', () => {
    const cfg = createConfig(schema, {
      KAFKA_BROKERS: '127.0.0.1:9092, 127.0.0.1:9093',
      DATABASE_URL: 'postgres://127.0.0.1/test',
      PORT: '',
    });
    expect(cfg).toEqual({
      KAFKA_BROKERS: ['127.0.0.1:9092', '127.0.0.1:9093'],
      DATABASE_URL: 'postgres://127.0.0.1/test',
      PORT: 8080,
      FLAG: false,
    });
  });

  it('names every bad variable and the value it got', () => {
    let error: unknown;
    try {
      createConfig(schema, {
        KAFKA_BROKERS: 'nohost',
        DATABASE_URL: 'mysql://x',
        PORT: '99999',
        FLAG: 'maybe',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/KAFKA_BROKERS: .*host:port.*"nohost"/);
    expect(message).toMatch(/DATABASE_URL: .*postgres:\/\//);
    expect(message).toMatch(/PORT: .*"99999"/);
    expect(message).toMatch(/FLAG: expected true or false/);
  });

  it('reports a missing required variable as unset', () => {
    expect(() => createConfig(schema, { KAFKA_BROKERS: '127.0.0.1:9092' })).toThrow(
      /DATABASE_URL: .*\(unset\)/,
    );
  });
});

describe('requireDirectUrl', () => {
  it('asks for DATABASE_DIRECT_URL with transaction pooling only, saying why', () => {
    const why = 'the streams LISTEN on a session of their own';
    expect(() => requireDirectUrl({ DATABASE_POOLING: 'transaction' }, why)).toThrow(ConfigError);
    expect(() => requireDirectUrl({ DATABASE_POOLING: 'transaction', DATABASE_DIRECT_URL: '' }, why)).toThrow(
      'DATABASE_DIRECT_URL: required with DATABASE_POOLING=transaction (the streams LISTEN on a session of their own, which a transaction-mode pooler does not keep) (unset)',
    );
    expect(() =>
      requireDirectUrl({ DATABASE_POOLING: 'transaction', DATABASE_DIRECT_URL: 'postgres://db/x' }, why),
    ).not.toThrow();
    expect(() => requireDirectUrl({ DATABASE_POOLING: 'session' }, why)).not.toThrow();
  });
});
