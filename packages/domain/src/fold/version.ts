/**
 * The fold's version, stamped in every projection schema (`fold_meta`, store migration 0015;
 * a new version comes with a migration that stamps fresh schemas with it).
 * 1: returns, equity points, the high water and the benchmark basket stepped per record.
 * 2: per block end — a vault's records of one block are all valued at its end.
 * 3: each flow and fee of a block settles at its own place (the fee's sub-period of the return
 *    too); snapshots show block-end figures only; a block whose last record was dead-lettered
 *    ends when a later block arrives; no `aiming` after an exit; a feed answering 0 or less keeps
 *    the last valid price, flagged; each charge settles the high water at the vault's own fee rate;
 *    tokens sent straight to a vault are booked at their log position (store migration 0016).
 * A projection of an older version keeps its figures until `vault-yield rebuild` re-folds the log.
 */
export const FOLD_VERSION = 3;
