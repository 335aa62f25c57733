/** A block's valuation could not be read: the node refused the lens, or answered what it cannot owe. */
export class BlockValuationError extends Error {
  override name = 'BlockValuationError';
}
