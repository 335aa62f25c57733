export { toPositionViews } from './positions.js';
export { toEquityPoint, toFeesView, toSnapshotView } from './snapshot.js';
