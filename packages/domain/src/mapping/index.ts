export { type AmountBasis, type LedgerAmount, ledgerAmount, ledgerAmounts, wholeTokens } from './amounts.js';
export { toPositionViews } from './positions.js';
export { shownState, stalePrices, toEquityPoint, toFeesView, toSnapshotView } from './snapshot.js';
