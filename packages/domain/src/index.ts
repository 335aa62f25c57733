/**
 * @vault-yield/domain — the event vocabulary (records), the API shapes (views), exact Uniswap v3
 * and fixed-point math, the per-vault fold, its view mapping and realised-return statistics.
 * No I/O anywhere.
 */

export * from './equity/index.js';
export * from './fold/index.js';
export * from './mapping/index.js';
export * from './math/index.js';
export * from './records/index.js';
export * from './screen/index.js';
export * from './stats/index.js';
export * from './views/index.js';
