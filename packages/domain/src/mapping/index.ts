export { type AmountBasis, type LedgerAmount, ledgerAmount, ledgerAmounts, wholeTokens } from './amounts.js';
export { holdValueUsd, MIN_APR_HISTORY_MS, timeInRangeOf, toLpView, YEAR_MS } from './lp.js';
export { toPositionViews } from './positions.js';
export { shownState, stalePrices, toEquityPoint, toFeesView, toSnapshotView } from './snapshot.js';
