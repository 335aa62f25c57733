/** The domain's test support: hand-made histories (fixtures) and fast-check arbitraries of histories and records. */
export * from './fixtures.js';
export * from './history.arbitrary.js';
export * from './record.arbitrary.js';
