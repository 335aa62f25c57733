export {
  type EquityPoint,
  type EquitySample,
  equityBasis,
  equityPoint,
  formatMicros,
  type Micros,
  microsOf,
} from './point.js';
