import { parseArgs } from 'node:util';
import { redactText, serveMetrics } from '@vault-yield/common';
import { z } from 'zod';
import type { AuditMetrics, AuditMode, AuditReport, AuditSelection } from '../audit/index.js';
import type { Command } from '../command.js';
import { auditEnvSchema } from '../config.js';
import { optionValue, parseDuration, usageError } from '../ops/env.js';
import { describeFailure } from '../ops/failure.js';

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x address (40 hex digits)');
const count = z.coerce.number().int().min(1, 'expected a whole number ≥ 1').max(1_000_000);
const tolerance = z.string().regex(/^\d+(\.\d+)?$/, 'expected dollars ≥ 0, e.g. 0.01');
const mode = z.enum(['auto', 'simulate', 'call']);

export const auditCommand: Command<typeof auditEnvSchema> = {
  env: auditEnvSchema,
  log: { name: 'audit', format: true },
  // --every serves /metrics: the process's default metrics with the audit's.
  defaultMetrics: true,
  help: `usage: vault-yield audit [--vaults N | --all | --vault 0x…] [--tolerance 0.01] [--every DURATION]
                       [--path auto|simulate|call] [--json]

Checks the service against the chain. For each chosen vault, reads the snapshot the reader serves
(GET /v1/vault/{id}/snapshot of the node's chain: valueUsd and blockNumber) and asks the chain what the vault is
worth at exactly that block — shares no valuation code with the indexer: on top of the block, the
pool burns every live position of the vault and collects all it owes (principal and fees) with the
vault as msg.sender (its live positions, and ranges the pool minted for it by others: the pool's
Mint logs), the rewards gauge pays the vault's pending rewards, then the vault's token
balances and each token's feed (the factory's feedOf, latestRoundData) are read; the value is
Σ balance × answer, exact. Prints a table (vault, block, served, chain, difference = chain −
served) and a summary line with the largest difference and the path the chain's work went by:
eth_simulateV1 (calls from the vault in one simulated block), or, on a node without it, an
eth_call at the block with the vault's code replaced by VaultAuditor (its storage kept).

Not compared, reported: a snapshot whose block is above the chain head (not on this chain), or
whose vault's newest ledger row (GET /v1/vault/{address}/events: its blockHash) is of a block the
chain no longer holds (a reorg the projection has not reverted yet); a
token whose feed answers no price (≤ 0) at the block (the snapshot keeps the last valid price and
flags it in stalePrices) or that has no feed. Not audited (exit 1): the unwinding reverted, or
the reader serves no snapshot of a vault named with --vault.

Exit 0 when every vault compared is within the tolerance, 1 when one is beyond it or could not be
audited (the summary names them), 2 on a usage error. --every runs again after each interval (a
compose service) and never exits on a difference: it exports vault_yield_audit_difference_usd
{vault}, vault_yield_audit_runs_total{outcome} and vault_yield_audit_vaults_total{verdict} on
METRICS_PORT (/metrics), and logs one line per run (a failed run: one line, redacted).

options:
  --all                every vault the reader lists (the default)
  --vaults N           the first N vaults the reader lists (by address)
  --vault 0x…          one vault
  --tolerance USD      largest |difference| accepted (default 0.01)
  --every DURATION     run again every DURATION (e.g. 1h, 15m) until SIGINT/SIGTERM
  --path MODE          auto (eth_simulateV1, else the override call; default), simulate, call
  --json               print the run as JSON (amounts as exact decimal strings)

environment:
  RPC_URL, READER_URL (required); START_BLOCK (where the pool's Mint logs for a vault are searched
  from: default the factory's deploymentBlock); METRICS_PORT, METRICS_HOST (--every); LOG_LEVEL, LOG_FORMAT`,
  async run(argv, context) {
    const { values } = parseArgs({
      args: argv,
      options: {
        all: { type: 'boolean', default: false },
        vaults: { type: 'string' },
        vault: { type: 'string' },
        tolerance: { type: 'string', default: '0.01' },
        every: { type: 'string' },
        path: { type: 'string', default: 'auto' },
        json: { type: 'boolean', default: false },
      },
    });
    const chosen = [values.all, values.vaults !== undefined, values.vault !== undefined].filter(
      Boolean,
    ).length;
    if (chosen > 1) throw usageError('give one of --all, --vaults N, --vault 0x…');
    const selection: AuditSelection =
      values.vault !== undefined
        ? { kind: 'vault', vault: optionValue('vault', address, values.vault) }
        : values.vaults !== undefined
          ? { kind: 'first', count: optionValue('vaults', count, values.vaults) }
          : { kind: 'all' };
    const everyMs = values.every === undefined ? undefined : parseDuration(values.every);
    if (everyMs !== undefined && everyMs < 1000) throw usageError(`--every ${values.every}: at least 1s`);
    const pathMode: AuditMode = optionValue('path', mode, values.path);
    const toleranceText = optionValue('tolerance', tolerance, values.tolerance);

    const ctx = context();
    const { config: env, log } = ctx;
    // viem loads only once the arguments and environment are good (a fast refusal otherwise).
    const { createChainClient, getHeadNumber } = await import('@vault-yield/chain');
    const {
      createAudit,
      createAuditMetrics,
      createChainAuditor,
      createServedReader,
      formatReport,
      parseUsd,
      reportJson,
      summaryOf,
    } = await import('../audit/index.js');
    const client = createChainClient({ rpcUrl: env.RPC_URL, cacheTime: 0, batch: { batchSize: 50 } });
    const audit = createAudit({
      chain: createChainAuditor(
        client,
        pathMode,
        env.START_BLOCK === undefined ? undefined : BigInt(env.START_BLOCK),
      ),
      // The audited node's chain: its vaults, by id, in a deployment of several chains.
      served: createServedReader(env.READER_URL, () => client.getChainId()),
      head: async () => BigInt(await getHeadNumber(client)),
      toleranceUsd: parseUsd(toleranceText),
      logger: log,
    });
    const print = (report: AuditReport) =>
      console.log(values.json ? JSON.stringify(reportJson(report), null, 2) : formatReport(report));

    if (everyMs === undefined) {
      const report = await audit.run(selection);
      print(report);
      return report.exitCode;
    }

    const metrics = createAuditMetrics(ctx.metrics);
    const server =
      env.METRICS_PORT === undefined
        ? null
        : await serveMetrics(metrics.registry, env.METRICS_PORT, env.METRICS_HOST);
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      while (!stop.signal.aborted) {
        try {
          const report = await audit.run(selection);
          record(metrics, report);
          print(report);
          log.info({ exitCode: report.exitCode }, summaryOf(report));
        } catch (err) {
          metrics.runs.inc({ outcome: 'failed' });
          metrics.lastRun.set(Date.now() / 1000);
          log.error(`audit run failed: ${redactText(describeFailure(err, process.env).message)}`);
        }
        await sleep(everyMs, stop.signal);
      }
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    }
    return 0;
  },
};

/** A run's figures into the metrics: each compared vault's difference, the run's and the vaults' outcomes. */
function record(metrics: AuditMetrics, report: AuditReport): void {
  // Only this run's comparisons: a vault no longer compared (not comparable, failed) keeps no old figure.
  metrics.difference.reset();
  for (const r of report.rows) {
    metrics.vaults.inc({ verdict: r.verdict });
    if (r.differenceUsd !== null) metrics.difference.set({ vault: r.vault }, Number(r.differenceUsd) / 1e18);
  }
  const outcome = report.rows.some((r) => r.verdict === 'failed')
    ? 'failed'
    : report.rows.some((r) => r.verdict === 'beyond')
      ? 'beyond'
      : 'ok';
  metrics.runs.inc({ outcome });
  metrics.lastRun.set(Date.now() / 1000);
}

/** Waits `ms`, or less when the signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
