export { toPositionViews } from './positions.js';
export { stalePrices, toEquityPoint, toFeesView, toSnapshotView } from './snapshot.js';
