import { ConfigError } from '@vault-yield/common';
import { describe, expect, it } from 'vitest';
import { logEnvSchema, migrateConfigSchema, namedTopicsSchema } from './config.js';
import { commandContext } from './context.js';

const settings = (env: Record<string, string>) => ({
  env,
  security: { ssl: true as const },
  connectBudgetMs: 5_000,
});

describe("a command's context", () => {
  it('reads its pick of the env when first asked, once, and not before (a usage error comes first)', () => {
    const env: Record<string, string> = {};
    const context = commandContext(
      { env: migrateConfigSchema, log: { name: 'cli', stdout: true } },
      settings(env),
    );
    // Unset when made: nothing read yet, so nothing refused.
    env.DATABASE_URL = 'postgres://u@h/db';
    const ctx = context();
    expect(ctx.config.DATABASE_URL).toBe('postgres://u@h/db');
    expect(ctx.config.LOG_LEVEL).toBe('info');
    expect(context()).toBe(ctx);
    // No brokers in its pick: no Kafka.
    expect(ctx.kafka).toBeNull();
  });

  it("refuses a bad variable as the schema says (invalid configuration:, the variable's name)", () => {
    const context = commandContext({ env: migrateConfigSchema, log: { name: 'cli' } }, settings({}));
    expect(context).toThrow(ConfigError);
    expect(context).toThrow(/invalid configuration:\n {2}DATABASE_URL:/);
  });

  it("hands the brokers with the process's SASL/TLS and connect budget; reads further picks of the same env", () => {
    const env = { KAFKA_BROKERS: 'a:9093,b:9093', KAFKA_TOPIC: 't1', SCREEN_TOPIC: ' ' };
    const ctx = commandContext({ env: logEnvSchema, log: { name: 'log' } }, settings(env))();
    expect(ctx.kafka).toEqual({ brokers: ['a:9093', 'b:9093'], ssl: true, connectBudgetMs: 5_000 });
    expect(ctx.read(namedTopicsSchema)).toEqual({ KAFKA_TOPIC: 't1' });
  });
});
