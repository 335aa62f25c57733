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
 * 4: a flow of a token that never had a valid price waits and is booked at the token's first valid
 *    price (never at 0; its ledger row's USD null); the owner's deposits and withdrawals apart
 *    from tokens received and from unexplained balance changes; an unexplained outflow is a loss,
 *    not capital out, and flags the vault (store migration 0023); returns net of the performance
 *    fee as it is earned — the return index chains over V − rate · max(0, V − HW) at every block,
 *    so a charge moves it only by what it differs from the fee accrued (issue #43 item 3). Kept
 *    at 4, not 5: it is the same unreleased wave, and migration 0023 stamps only schemas that hold
 *    no equity point yet, so every projection stamped 4 was folded by this code.
 * 5: the LP figures (issue #46; fold/lp.ts, VaultState.lp): the vault against holding, trading fees
 *    and rewards earned at the price when earned, fee and reward APR on time-weighted capital, the
 *    attribution of netUsd, divergence (impermanent) loss, time in range per position and vault,
 *    rebalances, drawdown and PnL in token terms (the snapshot's `lp`, positions' `timeInRange`),
 *    and the holding value at every equity point (`equity_points.hold_usd`, store migration 0030).
 *    They cannot be known from the middle of a vault's history: a projection folded before keeps
 *    `lp` null (absent from snapshots written before) and its equity points' `holdValueUsd` null —
 *    also on what it folds after the upgrade — until `vault-yield rebuild` re-folds the log (0030,
 *    like 0023, stamps 5 only on a schema that holds no equity point yet).
 * A projection of an older version keeps its figures until `vault-yield rebuild` re-folds the log.
 */
export const FOLD_VERSION = 5;
