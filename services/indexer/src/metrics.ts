import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Registry } from 'prom-client';

/** Prometheus metrics of one indexer (its own registry, so tests can run several in-process). */
export function createIndexerMetrics() {
  const registry = new Registry();
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
    rpcCalls: new Gauge({ name: 'indexer_rpc_calls', help: 'JSON-RPC calls made', registers: [registry] }),
    recordBytes: new Counter({
      name: 'indexer_record_bytes_published_total',
      help: 'Bytes of record values acknowledged by Kafka (JSON, before compression)',
      registers: [registry],
    }),
    valuationCalls: new Gauge({
      name: 'indexer_valuation_calls',
      help: 'eth_calls (VaultLens reads) made to read vault holdings and prices at their blocks',
      registers: [registry],
    }),
  };
  return m;
}

export type IndexerMetrics = ReturnType<typeof createIndexerMetrics>;

export function serveMetrics(metrics: IndexerMetrics, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/metrics') {
      metrics.registry
        .metrics()
        .then((body) => {
          res.writeHead(200, { 'content-type': metrics.registry.contentType });
          res.end(body);
        })
        .catch(() => {
          res.writeHead(500);
          res.end();
        });
      return;
    }
    res.writeHead(req.url === '/health' ? 200 : 404);
    res.end();
  });
  return new Promise((resolve) => server.listen(port, '0.0.0.0', () => resolve(server)));
}
