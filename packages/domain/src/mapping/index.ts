export { toPositionViews } from './positions.js';
export { shownState, stalePrices, toEquityPoint, toFeesView, toSnapshotView } from './snapshot.js';
