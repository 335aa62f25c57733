export * from './binary.js';
export * from './codec.js';
export * from './context.js';
export * from './envelope.js';
export * from './payloads.js';
export * from './primitives.js';
export * from './vault-id.js';
