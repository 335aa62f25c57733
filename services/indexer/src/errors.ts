/** The indexer stops on these instead of publishing data it cannot vouch for. */
export class IndexerHaltError extends Error {
  override name = 'IndexerHaltError';
}

/** A reorg reached below the oldest kept block hash: the published stream cannot be repaired here. */
export class ReorgTooDeepError extends IndexerHaltError {
  override name = 'ReorgTooDeepError';
}

/** A watched log that does not decode into a record (after re-fetching it). */
export class BadLogError extends IndexerHaltError {
  override name = 'BadLogError';
}

/** The node answered inconsistently (e.g. a log's blockHash differs from the block fetched). */
export class InconsistentRangeError extends Error {
  override name = 'InconsistentRangeError';
}
