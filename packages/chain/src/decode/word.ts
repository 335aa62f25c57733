/**
 * One 32-byte ABI word read from bytes (a log's topics and data, the lens' answer): a value of up
 * to 53 bits — ticks, counts, ids, most amounts — as a number without any text; a wider one
 * parsed from its hex. Two's complement when signed, as viem reads intN.
 */

export const WORD = 32;
const TWO_256 = 1n << 256n;
const TWO_255 = 1n << 255n;
const TWO_32 = 0x1_0000_0000;

/** `n` bytes of `b` from `o` all equal `v` (0 or 0xffffffff per four bytes). */
function all(b: Buffer, o: number, n: number, v: number): boolean {
  for (let i = o; i < o + n; i += 4) if (b.readUInt32BE(i) !== v) return false;
  return true;
}

/**
 * The word at byte `o` of `b` as a number when its value (two's complement when `signed`) is one
 * a double holds exactly (|v| < 2^53), else undefined.
 */
export function smallWord(b: Buffer, o: number, signed: boolean): number | undefined {
  const high = b.readUInt32BE(o + 24);
  const low = b.readUInt32BE(o + 28);
  if (all(b, o, 24, 0)) {
    const v = high * TWO_32 + low;
    return v <= Number.MAX_SAFE_INTEGER ? v : undefined;
  }
  if (signed && high >= 0x80000000 && all(b, o, 24, 0xffffffff)) {
    const v = (high - TWO_32) * TWO_32 + low;
    return v >= Number.MIN_SAFE_INTEGER ? v : undefined;
  }
  return undefined;
}

/** The word at byte `o` of `b`: the whole word, two's complement when `signed`. */
export function bigWord(b: Buffer, o: number, signed: boolean): bigint {
  const n = smallWord(b, o, signed);
  if (n !== undefined) return BigInt(n);
  const v = BigInt(`0x${b.toString('hex', o, o + WORD)}`);
  return signed && v >= TWO_255 ? v - TWO_256 : v;
}

/** The word at byte `o` of `b` as an address: its last 20 bytes, lowercase hex. */
export const addressWord = (b: Buffer, o: number): `0x${string}` =>
  `0x${b.toString('hex', o + 12, o + WORD)}`;
