import type { RpcCallObserver } from '@vault-yield/chain';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: a head read on a local node (≈ 1 ms) up to the RPC time-out (30 s by default). */
const RPC_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Prometheus metrics of one indexer, on the process's registry (its context's, default metrics
 * already in it) or on one of their own (so tests can run several in-process), with the
 * process's default metrics under their stock names (`process_*`, `nodejs_*`) unless `defaults`
 * is false.
 */
export function createIndexerMetrics(defaults: boolean | Registry = true) {
  const registry = defaults instanceof Registry ? defaults : new Registry();
  if (defaults === true) collectDefaultMetrics({ register: registry });
  // On the process's registry, an indexer before this one (a follower's, moved to another log)
  // leaves its metrics there: this one's replace them.
  for (const m of registry.getMetricsAsArray())
    if (m.name.startsWith('indexer_')) registry.removeSingleMetric(m.name);
  const rpcCalls = new Counter({
    name: 'indexer_rpc_calls_total',
    help: 'JSON-RPC calls sent to the node (each call of a batch counts), by method',
    labelNames: ['method'] as const,
    registers: [registry],
  });
  const rpcDuration = new Histogram({
    name: 'indexer_rpc_duration_seconds',
    help: 'Time from a JSON-RPC call to its answer or failure (batching and Retry-After waits included), by method',
    labelNames: ['method'] as const,
    buckets: RPC_BUCKETS,
    registers: [registry],
  });
  const valuationCalls = new Counter({
    name: 'indexer_valuation_calls_total',
    help: 'eth_calls (VaultLens reads) made to read vault holdings and prices at their blocks',
    registers: [registry],
  });
  const rpc: RpcCallObserver = {
    onCall: (method) => rpcCalls.inc({ method }),
    onCallDone: (method, seconds) => rpcDuration.observe({ method }, seconds),
  };
  let valuationCallsSeen = 0;
  const m = {
    registry,
    recordsPublished: new Counter({
      name: 'indexer_records_published_total',
      help: 'Records acknowledged by Kafka, by type',
      labelNames: ['type'] as const,
      registers: [registry],
    }),
    batches: new Counter({
      name: 'indexer_batches_total',
      help: 'Batches published and checkpointed',
      registers: [registry],
    }),
    rpcErrors: new Counter({
      name: 'indexer_rpc_errors_total',
      help: 'RPC failures seen (retried or surfaced), by kind',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    rangeSplits: new Counter({
      name: 'indexer_log_range_splits_total',
      help: 'getLogs ranges split after the node refused them or timed out',
      registers: [registry],
    }),
    badLogs: new Counter({
      name: 'indexer_bad_logs_total',
      help: 'Watched logs that did not decode (the indexer halts on them)',
      registers: [registry],
    }),
    inconsistentRanges: new Counter({
      name: 'indexer_inconsistent_ranges_total',
      help: 'Ranges refetched because the node answered inconsistently (log blockHash vs block)',
      registers: [registry],
    }),
    reorgs: new Counter({ name: 'indexer_reorgs_total', help: 'Reorgs handled', registers: [registry] }),
    reorgDepth: new Gauge({
      name: 'indexer_last_reorg_depth',
      help: 'Depth of the last reorg',
      registers: [registry],
    }),
    checkpointBlock: new Gauge({
      name: 'indexer_checkpoint_block',
      help: 'Last checkpointed block',
      registers: [registry],
    }),
    headBlock: new Gauge({ name: 'indexer_head_block', help: 'Chain head seen', registers: [registry] }),
    vaults: new Gauge({ name: 'indexer_vaults', help: 'Vaults known', registers: [registry] }),
    rpcCalls,
    rpcDuration,
    /** Feeds indexer_rpc_calls_total and indexer_rpc_duration_seconds: give it to the RPC client. */
    rpc,
    recordBytes: new Counter({
      name: 'indexer_record_bytes_published_total',
      help: 'Bytes of record values acknowledged by Kafka (as encoded: binary, or JSON under RECORD_ENCODING=json; before compression)',
      registers: [registry],
    }),
    valuationCalls,
    /**
     * Brings indexer_valuation_calls_total up to the valuator's running count of lens calls (a
     * count lower than the last one seen is a new valuator: counted from zero).
     */
    valuationCallsMade(total: number): void {
      const grown = total >= valuationCallsSeen ? total - valuationCallsSeen : total;
      valuationCallsSeen = total;
      if (grown > 0) valuationCalls.inc(grown);
    },
  };
  return m;
}

export type IndexerMetrics = ReturnType<typeof createIndexerMetrics>;
