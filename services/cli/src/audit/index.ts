import { type Logger, redactText } from '@vault-yield/common';
import { type AuditPath, type ChainAuditor, NotComparable, UnwindFailed } from './chain.js';
import type { ServedReader } from './served.js';
import { absUsd, chainUsd, formatUsd, servedUsd } from './value.js';

export { type AuditMode, type AuditPath, createChainAuditor } from './chain.js';
export { type AuditMetrics, createAuditMetrics } from './metrics.js';
export { createServedReader, ReaderFailure } from './served.js';
export { formatUsd, parseUsd } from './value.js';

/** Which vaults a run audits: every one the reader lists, its first N (by address), or one. */
export type AuditSelection =
  | { kind: 'all' }
  | { kind: 'first'; count: number }
  | { kind: 'vault'; vault: string };

/**
 * One vault's outcome. ok / beyond: compared (difference = chain − served, 10^-18 USD);
 * not-comparable: reported, not compared (the block is not on the chain, a feed answers no price);
 * failed: not audited (the unwinding reverted, the reader knows no such vault).
 */
export interface AuditRow {
  vault: string;
  block: number | null;
  servedUsd: bigint | null;
  chainUsd: bigint | null;
  differenceUsd: bigint | null;
  verdict: 'ok' | 'beyond' | 'not-comparable' | 'failed';
  path: AuditPath | null;
  /** What the chain unwound: live ranges burned and collected, reward tokens the gauge paid. */
  unwound: { ranges: number; pendingRewards: bigint } | null;
  note?: string;
}

export interface AuditReport {
  rows: AuditRow[];
  toleranceUsd: bigint;
  /** The largest |difference| among the vaults compared (0 when none was). */
  maxDifferenceUsd: bigint;
  /** The paths the chain's work went by in this run. */
  paths: AuditPath[];
  /** 0: every vault compared is within the tolerance (and none failed); 1 otherwise. */
  exitCode: 0 | 1;
}

export interface AuditDeps {
  chain: ChainAuditor;
  served: ServedReader;
  /** The chain's head block number. */
  head: () => Promise<bigint>;
  /** Largest |chain − served| accepted, 10^-18 USD. */
  toleranceUsd: bigint;
  logger: Logger;
  /** Vaults audited at once (default 4). */
  concurrency?: number;
}

/**
 * `vault-yield audit`: each chosen vault valued by the chain itself at the block its served
 * snapshot stands at, compared with the served valueUsd.
 */
export function createAudit(deps: AuditDeps) {
  async function auditOne(vault: string, head: bigint): Promise<AuditRow> {
    const row: AuditRow = {
      vault: vault.toLowerCase(),
      block: null,
      servedUsd: null,
      chainUsd: null,
      differenceUsd: null,
      verdict: 'failed',
      path: null,
      unwound: null,
    };
    const snapshot = await deps.served.snapshot(vault);
    if (!snapshot) return { ...row, note: 'the reader serves no snapshot of this vault' };
    row.block = snapshot.blockNumber;
    row.servedUsd = servedUsd(snapshot.valueUsd);
    if (BigInt(snapshot.blockNumber) > head)
      return {
        ...row,
        verdict: 'not-comparable',
        note: `block ${snapshot.blockNumber} is above the chain head ${head}: not on this chain`,
      };
    const reorged = await reorgedRow(vault, snapshot.blockNumber);
    if (reorged) return { ...row, verdict: 'not-comparable', note: reorged };
    try {
      const held = await deps.chain.holdingsAt(row.vault as `0x${string}`, BigInt(snapshot.blockNumber));
      row.path = held.path;
      row.unwound = { ranges: held.ranges, pendingRewards: held.pendingRewards };
      row.chainUsd = chainUsd(held.holdings);
      row.differenceUsd = row.chainUsd - row.servedUsd;
      row.verdict = absUsd(row.differenceUsd) <= deps.toleranceUsd ? 'ok' : 'beyond';
      return row;
    } catch (err) {
      if (err instanceof NotComparable) return { ...row, verdict: 'not-comparable', note: err.message };
      if (err instanceof UnwindFailed) return { ...row, verdict: 'failed', note: err.message };
      // The node answered with an error for this vault (a call it refused, state it does not keep
      // at that block): this vault is not audited, the others are. A node that does not answer
      // at all fails the run (one line naming RPC_URL).
      if (!answered(err)) throw err;
      return { ...row, verdict: 'failed', note: `the node refused a read: ${ownWords(err)}` };
    }
  }

  /**
   * Whether the snapshot stands on blocks the chain no longer holds: the reader serves no block
   * hash with a snapshot, but its ledger's rows carry theirs — the newest row at or below the
   * snapshot's block must be of the chain's block of that number.
   */
  async function reorgedRow(vault: string, block: number): Promise<string | null> {
    const newest = await deps.served.newestRow(vault);
    if (!newest || newest.blockNumber > block) return null;
    const hash = await deps.chain.blockHash(BigInt(newest.blockNumber));
    if (hash?.toLowerCase() === newest.blockHash.toLowerCase()) return null;
    return `its newest ledger row is of block ${newest.blockNumber} ${newest.blockHash.slice(0, 10)}…, no longer the chain's (${hash ? `${hash.slice(0, 10)}…` : 'none'}): a reorg the projection has not reverted yet`;
  }

  async function vaultsOf(selection: AuditSelection): Promise<string[]> {
    if (selection.kind === 'vault') return [selection.vault.toLowerCase()];
    return deps.served.vaults(selection.kind === 'first' ? selection.count : undefined);
  }

  return {
    async run(selection: AuditSelection): Promise<AuditReport> {
      const [vaults, head] = await Promise.all([vaultsOf(selection), deps.head()]);
      const rows: AuditRow[] = new Array(vaults.length);
      let next = 0;
      const worker = async () => {
        while (next < vaults.length) {
          const i = next++;
          rows[i] = await auditOne(vaults[i] as string, head);
          deps.logger.debug({ vault: rows[i]?.vault, verdict: rows[i]?.verdict }, 'vault audited');
        }
      };
      await Promise.all(Array.from({ length: Math.min(deps.concurrency ?? 4, vaults.length) }, worker));
      const compared = rows.filter((r) => r.differenceUsd !== null);
      const bad = rows.some((r) => r.verdict === 'beyond' || r.verdict === 'failed');
      return {
        rows,
        toleranceUsd: deps.toleranceUsd,
        maxDifferenceUsd: largest(compared.map((r) => absUsd(r.differenceUsd ?? 0n))),
        paths: [...new Set(rows.flatMap((r) => (r.path ? [r.path] : [])))],
        exitCode: bad ? 1 : 0,
      };
    },
  };
}

export type Audit = ReturnType<typeof createAudit>;

/** viem's errors for a node that did not answer: the run fails, every vault would. */
const UNANSWERED = new Set([
  'HttpRequestError',
  'TimeoutError',
  'WebSocketRequestError',
  'SocketClosedError',
]);

function answered(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (UNANSWERED.has(e.name)) return false;
  return err instanceof Error;
}

/** An error's own first line (viem's short message), redacted: a node's URL may carry a key. */
function ownWords(err: unknown): string {
  const e = err as { shortMessage?: unknown; message?: unknown };
  const text = typeof e.shortMessage === 'string' ? e.shortMessage : String(e.message ?? err);
  return redactText(text.split('\n')[0] ?? '');
}

/** The largest of some amounts (0 when none). */
// bigint: no Math.max; sorted descending, the first.
const largest = (amounts: bigint[]): bigint => amounts.sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))[0] ?? 0n;

const cell = (v: bigint | null) => (v === null ? '-' : formatUsd(v));

/** The run as a table (vault, block, served, chain, difference, verdict) and a summary line. */
export function formatReport(report: AuditReport): string {
  const head = ['vault', 'block', 'served', 'chain', 'difference', 'verdict'];
  const body = report.rows.map((r) => [
    r.vault,
    r.block === null ? '-' : String(r.block),
    cell(r.servedUsd),
    cell(r.chainUsd),
    cell(r.differenceUsd),
    r.note ? `${r.verdict}: ${r.note}` : r.verdict,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) =>
        i === cells.length - 1 ? c : i >= 2 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0),
      )
      .join('  ');
  return [line(head), ...body.map(line), summaryOf(report)].join('\n');
}

/** One line: how many compared, the largest difference, who is beyond or failed, the path. */
export function summaryOf(report: AuditReport): string {
  const by = (v: AuditRow['verdict']) => report.rows.filter((r) => r.verdict === v).map((r) => r.vault);
  const beyond = by('beyond');
  const failed = by('failed');
  const skipped = by('not-comparable');
  const compared = report.rows.length - skipped.length - failed.length;
  const parts = [
    `${report.rows.length} vault(s): ${compared} compared, max difference $${formatUsd(report.maxDifferenceUsd)} (tolerance $${formatUsd(report.toleranceUsd)})`,
    beyond.length > 0 ? `beyond tolerance: ${beyond.join(', ')}` : 'none beyond tolerance',
  ];
  if (failed.length > 0) parts.push(`not audited: ${failed.join(', ')}`);
  if (skipped.length > 0) parts.push(`not comparable: ${skipped.join(', ')}`);
  parts.push(`path: ${report.paths.length > 0 ? report.paths.join(' + ') : 'none'}`);
  return parts.join('; ');
}

/** The run as JSON (amounts as decimal USD strings, exact to 10^-18). */
export function reportJson(report: AuditReport): unknown {
  const usd = (v: bigint | null) => (v === null ? null : formatUsd(v, 18));
  return {
    ok: report.exitCode === 0,
    toleranceUsd: usd(report.toleranceUsd),
    maxDifferenceUsd: usd(report.maxDifferenceUsd),
    paths: report.paths,
    vaults: report.rows.map((r) => ({
      vault: r.vault,
      block: r.block,
      servedUsd: usd(r.servedUsd),
      chainUsd: usd(r.chainUsd),
      differenceUsd: usd(r.differenceUsd),
      verdict: r.verdict,
      path: r.path,
      unwound: r.unwound && { ranges: r.unwound.ranges, pendingRewards: r.unwound.pendingRewards.toString() },
      ...(r.note ? { note: r.note } : {}),
    })),
  };
}
