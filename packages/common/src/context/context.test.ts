import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger/index.js';
import { createContext, kafkaConnection } from './index.js';

const sink = (lines: string[]) =>
  new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });

describe('the process context', () => {
  it("makes the service's logger and a registry with the default metrics; no Kafka unless given", async () => {
    const lines: string[] = [];
    const ctx = createContext({
      service: 'svc',
      config: { a: 1 },
      log: { destination: sink(lines), format: 'json' },
    });
    ctx.log.child({ component: 'part' }).info('hello');
    expect(JSON.parse(lines[0]!)).toMatchObject({ service: 'svc', component: 'part', msg: 'hello' });
    expect(ctx.config).toEqual({ a: 1 });
    expect(ctx.kafka).toBeNull();
    expect(await ctx.metrics.metrics()).toContain('process_cpu_seconds_total');
  });

  it('keeps a logger handed in, and leaves the default metrics out when asked', async () => {
    const log = createLogger({ name: 'given', destination: sink([]) });
    const ctx = createContext({ service: 'svc', config: null, log, defaultMetrics: false });
    expect(ctx.log).toBe(log);
    expect(await ctx.metrics.metrics()).not.toContain('process_cpu_seconds_total');
  });

  it('names the Kafka connection from the env: brokers, SASL/TLS, budget; none without brokers', () => {
    expect(kafkaConnection({})).toBeNull();
    expect(
      kafkaConnection(
        {
          KAFKA_BROKERS: ['b:9093'],
          KAFKA_SASL_MECHANISM: 'scram-sha-512',
          KAFKA_SASL_USERNAME: 'u',
          KAFKA_SASL_PASSWORD: 'p',
          KAFKA_SSL: true,
        },
        5_000,
      ),
    ).toEqual({
      brokers: ['b:9093'],
      sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' },
      ssl: true,
      connectBudgetMs: 5_000,
    });
  });
});
