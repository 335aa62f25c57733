import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The projector's Prometheus metrics, on their own registry (several projectors per process in
 * tests), with the process's default metrics under their stock names (`process_*`, `nodejs_*`)
 * unless `defaults` is false.
 */
export function createProjectorMetrics(
  /** true/false: a registry of its own, with or without the default metrics; a Registry: the process's. */
  defaults: boolean | Registry = true,
) {
  const registry = defaults instanceof Registry ? defaults : new Registry();
  if (defaults === true) collectDefaultMetrics({ register: registry });
  // On the process's registry, a projector before this one (a follower's, moved to another
  // schema) leaves its metrics there: this one's replace them.
  for (const m of registry.getMetricsAsArray())
    if (m.name.startsWith('projector_')) registry.removeSingleMetric(m.name);
  const metrics = {
    registry,
    applied: new Counter({
      name: 'projector_records_applied_total',
      help: 'Records folded into the projection',
      registers: [registry],
    }),
    duplicates: new Counter({
      name: 'projector_records_duplicate_total',
      help: 'Records skipped because the ledger already held them (republished by the indexer)',
      registers: [registry],
    }),
    deadLetters: new Counter({
      name: 'projector_dead_letters_total',
      help: 'Records written to dead_letters, by kind (decode = bytes that are no record of the schema, binary or JSON; envelope = breaks the log rules, fold = the fold threw, gap = held: a record of its vault before it is missing)',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    released: new Counter({
      name: 'projector_held_records_released_total',
      help: 'Held records (dead letters of kind gap) folded once the missing records before them arrived',
      registers: [registry],
    }),
    stalePrices: new Counter({
      name: 'projector_stale_price_records_total',
      help: "Records valued with a price older than its feed's heartbeat at the record's block, by feed",
      labelNames: ['feed'] as const,
      registers: [registry],
    }),
    unexplainedOutflows: new Counter({
      name: 'projector_unexplained_outflows_total',
      help: 'Outflows no vault event explains (tokens gone without a withdrawal, fee or position event), booked as losses: balance.reconciled rows bookedAs loss',
      registers: [registry],
    }),
    reverts: new Counter({
      name: 'projector_reverts_total',
      help: 'Revert records that removed ledger rows and re-folded a vault',
      registers: [registry],
    }),
    batches: new Counter({
      name: 'projector_batches_total',
      help: 'Batches committed',
      registers: [registry],
    }),
    /** Named batchSeconds in code; exported as projector_batch_duration_seconds. */
    batchSeconds: new Histogram({
      name: 'projector_batch_duration_seconds',
      help: 'Time to fold and commit one batch',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
      registers: [registry],
    }),
    consumerReplacements: new Counter({
      name: 'projector_consumer_replacements_total',
      help: 'Kafka consumers replaced by a new one, by reason (dead = kafkajs gave up on it for good; stalled = no sign of life for the stall timeout)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    lag: new Gauge({
      name: 'projector_partition_lag',
      help: 'Records between the partition high watermark and the stored next offset',
      labelNames: ['partition'] as const,
      registers: [registry],
    }),
  };
  return metrics;
}

export type ProjectorMetrics = ReturnType<typeof createProjectorMetrics>;
