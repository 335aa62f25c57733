/**
 * Why the fold refused a record. The fold is total over what the chain accepted: every record
 * decoded from a successful transaction is applied, and what its events do not explain is
 * reconciled against the holdings in its context (evolve.ts). A FoldError therefore only marks a
 * record that breaks the log's own rules — a defect of the indexer or of the log, never of the
 * chain — and the projector dead-letters it, visibly and retryably.
 *
 * | reason                | refused when                                                              |
 * |-----------------------|---------------------------------------------------------------------------|
 * | not-created           | a record other than vault.created arrives before the vault exists          |
 * | already-created       | vault.created for a vault that already has state                           |
 * | wrong-vault           | record.vault (or chainId) differs from the state's vault                   |
 * | out-of-order          | record.blockNumber is lower than the last folded record's                  |
 * | revert-not-folded     | a `revert` record: the projector handles it by re-folding                  |
 * | unknown-token         | a payload or holdings token (or a pool's token) is missing from the context |
 * | decimals-changed      | the context reports different decimals for a known token                   |
 * | unknown-pool          | a held position names a pool missing from the record's context             |
 * | invalid-pool-price    | a context pool's sqrtPriceX96 is outside [MIN_SQRT_RATIO, MAX_SQRT_RATIO]  |
 */
export type FoldErrorReason =
  | 'not-created'
  | 'already-created'
  | 'wrong-vault'
  | 'out-of-order'
  | 'revert-not-folded'
  | 'unknown-token'
  | 'decimals-changed'
  | 'unknown-pool'
  | 'invalid-pool-price';

export class FoldError extends Error {
  override readonly name = 'FoldError';
  constructor(
    readonly reason: FoldErrorReason,
    message: string,
  ) {
    super(`${reason}: ${message}`);
  }
}

export function isFoldError(e: unknown): e is FoldError {
  return e instanceof FoldError;
}
