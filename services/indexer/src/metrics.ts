import type { RpcCallObserver } from '@vault-yield/chain';
import {
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type LabelValues,
  type Metric,
  Registry,
} from 'prom-client';

/** Seconds: a head read on a local node (≈ 1 ms) up to the RPC time-out (30 s by default). */
const RPC_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Updates made before the chain is known (the node's eth_chainId read) kept at most: a bound, never reached in practice. */
const MAX_PENDING = 10_000;

/** A counter of one chain: its `chain` label filled in. */
export interface ChainCounter<L extends string = never> {
  inc(labels?: LabelValues<L> | number, value?: number): void;
}
/** A gauge of one chain. */
export interface ChainGauge {
  set(value: number): void;
}
/** A histogram of one chain. */
export interface ChainHistogram<L extends string = never> {
  observe(labels: LabelValues<L>, value: number): void;
}

/**
 * Prometheus metrics of one indexer — one chain: every `indexer_*` series carries `chain` (the
 * chain id), so the indexers of several chains (one process each, or several in one process on
 * one registry) are told apart. On the process's registry (its context's, default metrics already
 * in it) or on one of their own (so tests can run several in-process), with the process's default
 * metrics under their stock names (`process_*`, `nodejs_*`) unless `defaults` is false.
 *
 * `chainId`: the chain when the config names it; otherwise the engine calls `setChain` once the
 * node told it (updates made before, the eth_chainId read's, are kept and counted then).
 */
export function createIndexerMetrics(defaults: boolean | Registry = true, chainId?: number) {
  const registry = defaults instanceof Registry ? defaults : new Registry();
  if (defaults === true) collectDefaultMetrics({ register: registry });
  // An indexer before this one on the process's registry (a follower's, moved to another log; the
  // indexer of another chain in the same process) left its metrics there: they are shared, each
  // indexer writing its own chain's series. Metrics of a version without the chain label go.
  for (const m of registry.getMetricsAsArray()) {
    const labels = (m as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
    if (m.name.startsWith('indexer_') && !labels.includes('chain')) registry.removeSingleMetric(m.name);
  }
  const shared = <M extends Metric>(name: string, make: () => M): M =>
    (registry.getSingleMetric(name) as M | undefined) ?? make();

  let chain = chainId === undefined ? undefined : String(chainId);
  const pending: ((chain: string) => void)[] = [];
  const at = (fn: (chain: string) => void) => {
    if (chain !== undefined) fn(chain);
    else if (pending.length < MAX_PENDING) pending.push(fn);
  };
  const counter = <L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
  ): ChainCounter<L> => {
    const c = shared(
      name,
      () =>
        new Counter<L | 'chain'>({ name, help, labelNames: [...labelNames, 'chain'], registers: [registry] }),
    );
    return {
      inc(labels, value) {
        const [l, v] = typeof labels === 'number' ? [{}, labels] : [labels ?? {}, value ?? 1];
        at((chain) => c.inc({ ...l, chain } as LabelValues<L | 'chain'>, v));
      },
    };
  };
  const gauge = (name: string, help: string): ChainGauge => {
    const g = shared(
      name,
      () => new Gauge<'chain'>({ name, help, labelNames: ['chain'], registers: [registry] }),
    );
    return { set: (value) => at((chain) => g.set({ chain }, value)) };
  };
  const histogram = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    buckets: number[],
  ): ChainHistogram<L> => {
    const h = shared(
      name,
      () =>
        new Histogram<L | 'chain'>({
          name,
          help,
          labelNames: [...labelNames, 'chain'],
          buckets,
          registers: [registry],
        }),
    );
    return {
      observe: (labels, value) =>
        at((chain) => h.observe({ ...labels, chain } as LabelValues<L | 'chain'>, value)),
    };
  };

  const rpcCalls = counter(
    'indexer_rpc_calls_total',
    'JSON-RPC calls sent to the node (each call of a batch counts), by method',
    ['method'] as const,
  );
  const rpcDuration = histogram(
    'indexer_rpc_duration_seconds',
    'Time from a JSON-RPC call to its answer or failure (batching and Retry-After waits included), by method',
    ['method'] as const,
    RPC_BUCKETS,
  );
  const valuationCalls = counter(
    'indexer_valuation_calls_total',
    'eth_calls (VaultLens reads) made to read vault holdings and prices at their blocks',
  );
  const rpc: RpcCallObserver = {
    onCall: (method) => rpcCalls.inc({ method }),
    onCallDone: (method, seconds) => rpcDuration.observe({ method }, seconds),
  };
  let valuationCallsSeen = 0;
  const m = {
    registry,
    /** The chain id its series are labelled with (undefined until known). */
    get chain(): number | undefined {
      return chain === undefined ? undefined : Number(chain);
    },
    /** Names the chain (once the node told it): updates made before it are counted now. */
    setChain(id: number): void {
      if (chain !== undefined) {
        if (chain !== String(id))
          throw new Error(`indexer metrics of chain ${chain} cannot be moved to chain ${id}`);
        return;
      }
      chain = String(id);
      for (const fn of pending.splice(0)) fn(chain);
    },
    recordsPublished: counter('indexer_records_published_total', 'Records acknowledged by Kafka, by type', [
      'type',
    ] as const),
    batches: counter('indexer_batches_total', 'Batches published and checkpointed'),
    rpcErrors: counter('indexer_rpc_errors_total', 'RPC failures seen (retried or surfaced), by kind', [
      'kind',
    ] as const),
    rangeSplits: counter(
      'indexer_log_range_splits_total',
      'getLogs ranges split after the node refused them or timed out',
    ),
    badLogs: counter(
      'indexer_bad_logs_total',
      'Watched logs that did not decode (the indexer halts on them)',
    ),
    inconsistentRanges: counter(
      'indexer_inconsistent_ranges_total',
      'Ranges refetched because the node answered inconsistently (log blockHash vs block)',
    ),
    reorgs: counter('indexer_reorgs_total', 'Reorgs handled'),
    reorgDepth: gauge('indexer_last_reorg_depth', 'Depth of the last reorg'),
    checkpointBlock: gauge('indexer_checkpoint_block', 'Last checkpointed block'),
    headBlock: gauge('indexer_head_block', 'Chain head seen'),
    vaults: gauge('indexer_vaults', 'Vaults known'),
    rpcCalls,
    rpcDuration,
    /** Feeds indexer_rpc_calls_total and indexer_rpc_duration_seconds: give it to the RPC client. */
    rpc,
    recordBytes: counter(
      'indexer_record_bytes_published_total',
      'Bytes of record values acknowledged by Kafka (as encoded: binary, or JSON under RECORD_ENCODING=json; before compression)',
    ),
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
