/**
 * Values at the edges of the word readers' number paths (word.ts: a word of ≤ 53 bits read as a
 * number, int32 ticks, 64-bit tails, wide words parsed from text), for the property tests of the
 * decoders that read words with them (decode/static.ts, valuation/words.ts). Test support: not
 * exported by the package.
 */
export const WORD_EDGES: readonly bigint[] = [
  0n,
  1n,
  -1n,
  (1n << 53n) - 1n,
  1n << 53n,
  -(1n << 53n) + 1n,
  -(1n << 53n),
  (1n << 63n) - 1n,
  1n << 63n,
  -(1n << 63n),
  -(1n << 63n) - 1n,
  (1n << 64n) - 1n,
  1n << 64n,
  -(1n << 64n),
  (1n << 192n) - 1n,
  1n << 192n,
  2147483647n,
  2147483648n,
  -2147483648n,
  -2147483649n,
  1n << 255n,
  (1n << 256n) - 1n,
];
