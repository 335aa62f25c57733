import { z } from 'zod';
import { MAX_TICK, MIN_TICK } from '../math/tick-math.js';

/**
 * The patterns of the record's text values, shared by the zod schemas below, the JSON fast path
 * (envelope.ts) and the binary codec (binary.ts), so the three accept the same strings.
 */
export const PATTERNS = {
  address: /^0x[0-9a-fA-F]{40}$/,
  hash32: /^0x[0-9a-fA-F]{64}$/,
  uint: /^(0|[1-9][0-9]*)$/,
  int: /^-?(0|[1-9][0-9]*)$/,
  decimal: /^(0|[1-9][0-9]*)(\.[0-9]{1,36})?$/,
} as const;

/** 0x + 40 hex, any case in; lowercase out (the service's canonical form everywhere). */
export const address = z
  .string()
  .regex(PATTERNS.address, 'expected an address: 0x followed by 40 hex digits')
  .transform((a) => a.toLowerCase() as `0x${string}`);

/** 0x + 64 hex, lowercased. */
export const hash32 = z
  .string()
  .regex(PATTERNS.hash32, 'expected 0x followed by 64 hex digits')
  .transform((h) => h.toLowerCase() as `0x${string}`);

/** Unsigned integer carried as a decimal string (token amounts, liquidity, sqrtPriceX96). */
export const uintString = z.string().regex(PATTERNS.uint, 'expected an unsigned integer string');

/** Signed integer carried as a decimal string. */
export const intString = z.string().regex(PATTERNS.int, 'expected an integer string');

/** Non-negative decimal carried as a string, e.g. a USD price "1843.12345678". */
export const decimalString = z.string().regex(PATTERNS.decimal, 'expected a non-negative decimal string');

/** Uniswap v3 tick range. */
export const tick = z.number().int().min(MIN_TICK).max(MAX_TICK);

export const ZERO_HASH = `0x${'0'.repeat(64)}` as const;
