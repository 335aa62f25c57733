import { z } from 'zod';

/** 0x + 40 hex, any case in; lowercase out (the service's canonical form everywhere). */
export const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'expected an address: 0x followed by 40 hex digits')
  .transform((a) => a.toLowerCase() as `0x${string}`);

/** 0x + 64 hex, lowercased. */
export const hash32 = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'expected 0x followed by 64 hex digits')
  .transform((h) => h.toLowerCase() as `0x${string}`);

/** Unsigned integer carried as a decimal string (token amounts, liquidity, sqrtPriceX96). */
export const uintString = z.string().regex(/^(0|[1-9][0-9]*)$/, 'expected an unsigned integer string');

/** Signed integer carried as a decimal string. */
export const intString = z.string().regex(/^-?(0|[1-9][0-9]*)$/, 'expected an integer string');

/** Non-negative decimal carried as a string, e.g. a USD price "1843.12345678". */
export const decimalString = z
  .string()
  .regex(/^(0|[1-9][0-9]*)(\.[0-9]{1,36})?$/, 'expected a non-negative decimal string');

/** Uniswap v3 tick range. */
export const tick = z.number().int().min(-887272).max(887272);

export const ZERO_HASH = `0x${'0'.repeat(64)}` as const;
