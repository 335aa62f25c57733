/**
 * The fold's version, stamped in every projection schema (`fold_meta`, store migration 0015;
 * a new version comes with a migration that stamps fresh schemas with it).
 * 1: returns, equity points, the high-water mark and the benchmark basket stepped per record.
 * 2: per block end — a vault's records of one block are all valued at its end.
 * A projection of an older version keeps its figures until `vault-yield rebuild` re-folds the log.
 */
export const FOLD_VERSION = 2;
