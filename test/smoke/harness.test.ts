import { resolveKafka } from '@vault-yield/test-kit/services';
import { describe, expect, it } from 'vitest';

describe('harness', () => {
  it('fails loudly, naming the fix, when KAFKA_BROKERS points at nothing', async () => {
    await expect(resolveKafka({ KAFKA_BROKERS: '127.0.0.1:1' })).rejects.toThrow(
      /Kafka is unreachable at KAFKA_BROKERS=127\.0\.0\.1:1.*unset KAFKA_BROKERS.*kafka:fetch/s,
    );
  });
});
