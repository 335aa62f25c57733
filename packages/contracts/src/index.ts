/**
 * Reference contracts of the vault service: ABIs (`as const`, so viem infers argument and event
 * types) and creation bytecode, generated from solidity/ by scripts/compile.ts.
 */
export * from './artifacts/index.js';
