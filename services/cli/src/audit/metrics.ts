import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';

/**
 * `vault-yield audit --every`'s Prometheus metrics, on a registry of its own (several audits per
 * process in tests), with the process's default metrics unless `defaults` is false.
 */
export function createAuditMetrics(
  /** true/false: a registry of its own, with or without the default metrics; a Registry: the process's. */
  defaults: boolean | Registry = true,
) {
  const registry = defaults instanceof Registry ? defaults : new Registry();
  if (defaults === true) collectDefaultMetrics({ register: registry });
  return {
    registry,
    difference: new Gauge({
      name: 'vault_yield_audit_difference_usd',
      help: "Chain value minus served valueUsd of a vault at its snapshot's block, at the last audit run that compared it (USD; the alert fires beyond the tolerance either way)",
      labelNames: ['vault'] as const,
      registers: [registry],
    }),
    runs: new Counter({
      name: 'vault_yield_audit_runs_total',
      help: 'Audit runs by outcome: ok (every vault compared within the tolerance), beyond (a vault beyond it), failed (a vault or the run could not be audited: an RPC or reader error, a revert)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    vaults: new Counter({
      name: 'vault_yield_audit_vaults_total',
      help: 'Vaults audited by verdict: ok, beyond, not-comparable (no price at the block, a block not on the chain), failed',
      labelNames: ['verdict'] as const,
      registers: [registry],
    }),
    lastRun: new Gauge({
      name: 'vault_yield_audit_last_run_timestamp_seconds',
      help: 'When the last audit run ended (Unix seconds)',
      registers: [registry],
    }),
  };
}

export type AuditMetrics = ReturnType<typeof createAuditMetrics>;
