import type { Logger } from '@vault-yield/common';
import type { LogBatch } from '@vault-yield/log';
import type { DeadLetterKind, ProjectionTx } from '@vault-yield/store';
import type { CachedVault, StateCache } from './cache.js';
import { createVaultProjection, type VaultBatchOut } from './projection.js';
import type { Decoded } from './rows.js';
import { type Applied, runBatch } from './runner/index.js';

/**
 * The projector's batch: the exactly-once runner (runner/) feeding the vault projection
 * (projection.ts), and its report (the stream notice is the runner's last write).
 */

export interface BatchStats {
  applied: number;
  duplicates: number;
  /** Messages below the stored offset (already applied by this projection). */
  skipped: number;
  /** Dead letters by kind (see DeadLetterKind). */
  deadLetters: Record<DeadLetterKind, number>;
  /** Records valued with a price older than its feed's heartbeat, by feed. */
  stale: Map<string, number>;
  /** Outflows no vault event explains (losses) found at the batch's block ends. */
  unexplainedOutflows: number;
  reverts: number;
  vaults: number;
  /** Held records folded once the gap before them was filled. */
  released: number;
  /** Milliseconds spent per phase (for debug logs and profiling). */
  ms: { read: number; fold: number; write: number };
}

export type ApplyResult =
  | {
      kind: 'applied';
      stats: BatchStats;
      /** The partition's stored offset once this transaction commits. */
      nextOffset: string;
      /** The partition's epoch: the cache keys its states by `${nextOffset}@${epoch}`. */
      epoch: string;
      /** The batch's vaults as they stand once this transaction commits (null: no state). */
      vaults: Map<string, CachedVault | null>;
      /** The dead letters of the batch (vault: address and chain, kind, reason) for the logs. */
      letters: readonly {
        vault: string | null;
        chainId: number | null;
        offset: string;
        kind: DeadLetterKind;
        reason: string;
      }[];
    }
  | { kind: 'gap'; seekTo: string };

export interface ApplyOptions {
  /** Fold states of earlier batches (validated against the stored offset and epoch). */
  cache?: StateCache;
  /**
   * COPY the ledger rows instead of `insert … on conflict do nothing`. Rows are new by
   * construction (duplicates are filtered first), so this only fails, with a unique violation
   * that aborts the transaction, on a record whose identity is in the ledger at a different
   * position; the caller then re-runs the batch without it.
   */
  copyLedger?: boolean;
}

export async function applyBatch(
  tx: ProjectionTx,
  batch: LogBatch<Decoded>,
  log: Logger,
  opts: ApplyOptions = {},
): Promise<ApplyResult> {
  const run = await runBatch(tx, batch, createVaultProjection({ log, ...opts }));
  return run.kind === 'gap' ? run : applyResult(run);
}

/** What the runner made of a vault batch, as the projector reports it. */
export function applyResult(run: Applied<VaultBatchOut>): Extract<ApplyResult, { kind: 'applied' }> {
  const out = run.out;
  return {
    kind: 'applied',
    stats: {
      applied: out?.applied ?? 0,
      duplicates: out?.duplicates ?? 0,
      skipped: run.skipped,
      deadLetters: run.deadLetters,
      stale: out?.stale ?? new Map(),
      unexplainedOutflows: out?.unexplainedOutflows ?? 0,
      reverts: out?.reverts ?? 0,
      vaults: out?.vaults ?? 0,
      released: out?.released ?? 0,
      ms: out?.ms ?? { read: 0, fold: 0, write: 0 },
    },
    nextOffset: run.nextOffset,
    epoch: run.epoch,
    vaults: out?.states ?? new Map(),
    letters: run.letters.map((l) => ({
      vault: l.vault,
      chainId: l.chainId ?? null,
      offset: l.offset,
      kind: l.kind,
      reason: l.reason,
    })),
  };
}
