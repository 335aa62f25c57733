import { ConfigError } from '@vault-yield/common';
import { describe, expect, it } from 'vitest';
import { indexerConfigFromEnv, indexerConfigSchema, loadIndexerEnv } from './config.js';

const required = {
  RPC_URL: 'http://127.0.0.1:8545',
  FACTORY_ADDRESS: '0x00000000000000000000000000000000000000AA',
  KAFKA_BROKERS: '127.0.0.1:9092',
  DATABASE_URL: 'postgres://indexer@127.0.0.1:5432/vault_yield',
};

describe('indexer config: one shape, defaults in one place', () => {
  it('the environment reaches the config shape and takes its defaults from the config schema', () => {
    const config = indexerConfigSchema.parse(indexerConfigFromEnv(loadIndexerEnv(required)));
    expect(config).toMatchObject({
      rpcUrl: required.RPC_URL,
      rpcTimeoutMs: 30_000,
      factory: '0x00000000000000000000000000000000000000aa',
      confirmations: 0,
      kafka: { brokers: ['127.0.0.1:9092'], topic: 'vault-records', partitions: 12, encoding: 'binary' },
      schema: 'vault_yield',
      pollIntervalMs: 1000,
      maxBlockRange: 10_000,
      concurrency: 4,
      reorgWindow: 128,
      mark: { intervalBlocks: 10, minIntervalMs: 0 },
      addressFilterLimit: 1000,
      heartbeats: { default: 3600, byFeed: {} },
      valuationLens: 'auto',
      giveUpAfterMs: 120_000,
    });
    expect(config.kafka.replicationFactor).toBeUndefined();
    expect(config.startBlock).toBeUndefined();
  });

  it('what the environment sets wins over every default', () => {
    const feed = '0x00000000000000000000000000000000000000Fe';
    const env = loadIndexerEnv({
      ...required,
      CONFIRMATIONS: '3',
      KAFKA_TOPIC: 'records-b',
      MARK_INTERVAL_BLOCKS: '0',
      FEED_HEARTBEAT_SECONDS: '86400',
      FEED_HEARTBEATS: `${feed}=60`,
      RECORD_ENCODING: 'json',
      VALUATION_LENS: 'create',
    });
    const config = indexerConfigSchema.parse(indexerConfigFromEnv(env));
    expect(config.confirmations).toBe(3);
    expect(config.kafka.topic).toBe('records-b');
    expect(config.kafka.encoding).toBe('json');
    expect(config.valuationLens).toBe('create');
    expect(config.mark).toEqual({ intervalBlocks: 0, minIntervalMs: 0 });
    expect(config.heartbeats).toEqual({ default: 86400, byFeed: { [feed.toLowerCase()]: 60 } });
  });

  it('a bad variable is named with what was given', () => {
    expect(() => loadIndexerEnv({ ...required, CONCURRENCY: '0' })).toThrow(ConfigError);
    expect(() => loadIndexerEnv({ ...required, CONCURRENCY: '0' })).toThrow(/CONCURRENCY: .*\(got "0"\)/);
    expect(() => loadIndexerEnv({ ...required, FEED_HEARTBEATS: 'feed=1' })).toThrow(/FEED_HEARTBEATS/);
    expect(() => loadIndexerEnv({ ...required, RECORD_ENCODING: 'avro' })).toThrow(
      /RECORD_ENCODING: expected binary or json \(got "avro"\)/,
    );
    expect(() => loadIndexerEnv({ ...required, VALUATION_LENS: 'multicall' })).toThrow(
      /VALUATION_LENS: expected auto, override \(state override\) or create \(creation code\) \(got "multicall"\)/,
    );
    expect(() => loadIndexerEnv({ ...required, RPC_WS_URL: 'http://127.0.0.1:8545' })).toThrow(
      /RPC_WS_URL: expected a ws:\/\/ or wss:\/\/ URL/,
    );
    expect(loadIndexerEnv({ ...required, RPC_WS_URL: 'wss://node.example/ws' }).RPC_WS_URL).toBe(
      'wss://node.example/ws',
    );
  });

  it('a programmatic config is checked by the same schema', () => {
    const base = { rpcUrl: 'http://x', factory: required.FACTORY_ADDRESS, databaseUrl: 'postgres://x' };
    const bad = indexerConfigSchema.safeParse({ ...base, kafka: { brokers: ['b:1'] }, endBlock: -1 });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['endBlock']);
    const ok = indexerConfigSchema.parse({
      ...base,
      kafka: { brokers: ['b:1'] },
      mark: { intervalBlocks: 2 },
    });
    expect(ok.mark).toEqual({ intervalBlocks: 2, minIntervalMs: 0 });
  });
});
