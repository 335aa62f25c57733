import { Writable } from 'node:stream';
import { createLogger } from '@vault-yield/common';
import { describe, expect, it } from 'vitest';
import { BrokersUnansweredError, brokersAnswer, kafkaClient, kafkaTlsOptions } from './kafka.js';

describe('kafkajs lines in our logs', () => {
  const capture = () => {
    const lines: { level: string; msg: string }[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(JSON.parse(String(chunk)) as { level: string; msg: string });
        cb();
      },
    });
    return {
      lines,
      logger: createLogger({ name: 'test', level: 'debug', destination: sink, format: 'json' }),
    };
  };

  it('what a starting broker answers before a retry succeeds is debug, not error; other errors stay errors', () => {
    const { lines, logger } = capture();
    const k = kafkaClient({
      brokers: ['127.0.0.1:9'],
      clientId: 't',
      logger,
      kafkaLogLevel: 'debug',
    }).logger();
    k.error('Response GroupCoordinator(key: 10, version: 2)', {
      error: 'The group coordinator is not available',
    });
    k.error('Response InitProducerId(key: 22, version: 1)', {
      error: "The coordinator is loading and hence can't process requests for this group",
    });
    k.error('Connection error: connect ECONNREFUSED 127.0.0.1:9', { error: 'ECONNREFUSED' });
    expect(lines.map((l) => l.level)).toEqual(['debug', 'debug', 'error']);
  });

  it("a one-shot command's client (kafkaLinesAtDebug) logs every kafkajs line at debug: it reports the failure itself", () => {
    const { lines, logger } = capture();
    const k = kafkaClient({
      brokers: ['127.0.0.1:9'],
      clientId: 't',
      logger,
      kafkaLogLevel: 'debug',
      kafkaLinesAtDebug: true,
    }).logger();
    k.error('Connection error: connect ECONNREFUSED 127.0.0.1:9', { error: 'ECONNREFUSED' });
    k.error('Failed to connect to seed broker, trying other brokers from the metadata', { retryCount: 0 });
    k.warn('a warning', {});
    expect(lines.map((l) => l.level)).toEqual(['debug', 'debug', 'debug']);
  });
});

describe('TLS options handed to kafkajs', () => {
  it('carry the CA and, for mTLS, the client certificate and key', () => {
    expect(kafkaTlsOptions(true)).toBe(true);
    expect(kafkaTlsOptions({ ca: ['CA'] })).toEqual({ ca: ['CA'] });
    expect(kafkaTlsOptions({ ca: ['CA'], cert: 'CERT', key: 'KEY' })).toEqual({
      ca: ['CA'],
      cert: 'CERT',
      key: 'KEY',
    });
    expect(kafkaTlsOptions({ cert: 'CERT', key: 'KEY' })).toEqual({ cert: 'CERT', key: 'KEY' });
  });
});

describe("a one-shot process's connect budget (the CLI's KAFKA_CONNECT_BUDGET_MS)", () => {
  const closed = { brokers: ['127.0.0.1:1'], clientId: 't' };

  it('a broker that does not answer fails the first client once the budget is spent, naming the cause', async () => {
    const budgeted = { ...closed, connectBudgetMs: 300 };
    const err = await brokersAnswer(budgeted).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BrokersUnansweredError);
    expect((err as Error).message).toMatch(
      /^no broker of 127\.0\.0\.1:1 answered within 300 ms \(.*ECONNREFUSED/,
    );
    // Not remembered as failed: the next client of the process tries again.
    await expect(brokersAnswer(budgeted)).rejects.toBeInstanceOf(BrokersUnansweredError);
  });

  it('without a budget (services, `dev`), nothing is probed: the clients retry as configured', async () => {
    await expect(brokersAnswer(closed)).resolves.toBeUndefined();
  });
});
