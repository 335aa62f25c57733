import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createIndexerMetrics } from './metrics.js';

describe('indexer metrics of one chain', () => {
  it('label every series with the chain; a follower of the same chain on the registry keeps counting', async () => {
    const a = createIndexerMetrics(false, 10);
    a.recordsPublished.inc({ type: 'deposit' });
    a.batches.inc();
    a.recordBytes.inc(100);
    a.headBlock.set(5);
    const again = createIndexerMetrics(a.registry, 10); // FOLLOW_LIVE's next indexer
    again.recordsPublished.inc({ type: 'deposit' });
    again.headBlock.set(6);
    const text = await a.registry.metrics();
    expect(text).toContain('indexer_records_published_total{type="deposit",chain="10"} 2');
    expect(text).toContain('indexer_batches_total{chain="10"} 1');
    expect(text).toContain('indexer_record_bytes_published_total{chain="10"} 100');
    expect(text).toContain('indexer_head_block{chain="10"} 6');
    expect(text).not.toMatch(/^indexer_\w+(\{(?![^}]*chain=)[^}]*\})? /m);
  });

  it('replace an indexer metric registered without the chain label (a version before it)', async () => {
    const registry = new Registry();
    new Counter({ name: 'indexer_batches_total', help: 'old', registers: [registry] }).inc(3);
    const m = createIndexerMetrics(registry, 1);
    m.batches.inc();
    const text = await registry.metrics();
    expect(text).toContain('indexer_batches_total{chain="1"} 1');
    expect(text).not.toMatch(/^indexer_batches_total 3$/m);
  });

  it('keep what happens before the chain is known, and count it under the chain once named', async () => {
    const m = createIndexerMetrics(false);
    expect(m.chain).toBeUndefined();
    m.rpc.onCall?.('eth_chainId');
    m.rpc.onCallDone?.('eth_chainId', 0.002, false);
    expect(await m.registry.metrics()).not.toContain('eth_chainId');
    m.setChain(8453);
    m.setChain(8453); // the same chain again: nothing changes
    expect(m.chain).toBe(8453);
    const text = await m.registry.metrics();
    expect(text).toContain('indexer_rpc_calls_total{method="eth_chainId",chain="8453"} 1');
    expect(text).toContain('indexer_rpc_duration_seconds_count{method="eth_chainId",chain="8453"} 1');
    expect(() => m.setChain(1)).toThrow(/chain 8453 cannot be moved to chain 1/);
  });
});
