/**
 * Why the fold refused a record. The projector dead-letters the record and keeps the state it had;
 * every reason is an impossibility for a correct contract + indexer, never a business outcome.
 *
 * | reason                | refused when                                                              |
 * |-----------------------|---------------------------------------------------------------------------|
 * | not-created           | a record other than vault.created arrives before the vault exists          |
 * | already-created       | vault.created for a vault that already has state                           |
 * | wrong-vault           | record.vault (or chainId) differs from the state's vault                   |
 * | out-of-order          | record.blockNumber is lower than the last folded record's                  |
 * | revert-not-folded     | a `revert` record: the projector handles it by re-folding                  |
 * | unknown-token         | a payload token (or a pool's token0/token1) is missing from the record's context |
 * | decimals-changed      | the context reports different decimals for a known token                   |
 * | unknown-pool          | position.opened names a pool missing from the record's context             |
 * | invalid-pool-price    | a context pool's sqrtPriceX96 is outside [MIN_SQRT_RATIO, MAX_SQRT_RATIO]  |
 * | insufficient-idle     | a withdrawal, fee, open, resize or rebalance needs more idle than held      |
 * | insufficient-pending  | rewards.claimed claims more than pending                                   |
 * | position-exists       | position.opened reuses an open position id                                  |
 * | position-missing      | resize / rebalance / close / fees.collected for an id that is not open      |
 * | invalid-transition    | suspended while suspended, resumed while not suspended, exit.requested while |
 * |                       | exiting, exit.completed without exit.requested                               |
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
  | 'invalid-pool-price'
  | 'insufficient-idle'
  | 'insufficient-pending'
  | 'position-exists'
  | 'position-missing'
  | 'invalid-transition';

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
