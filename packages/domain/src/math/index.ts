export * from './fee-growth.js';
export * from './fixed.js';
export * from './full-math.js';
export * from './liquidity-amounts.js';
export * from './price.js';
export * from './tick-math.js';
