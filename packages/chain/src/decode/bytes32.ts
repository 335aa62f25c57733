import { type Hex, hexToBytes } from 'viem';

/**
 * A bytes32 strategy id as text: right-padded ASCII, trailing NULs trimmed. Returns null when the
 * value is empty or holds a non-printable / non-ASCII byte before the padding (or after it).
 */
export function bytes32ToAscii(value: Hex): string | null {
  const bytes = hexToBytes(value);
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  if (end === 0) return null;
  let out = '';
  for (let i = 0; i < end; i++) {
    const b = bytes[i]!;
    if (b < 0x20 || b > 0x7e) return null;
    out += String.fromCharCode(b);
  }
  return out;
}

/** The inverse, for drivers and tests: ASCII text (≤ 32 chars) right-padded to bytes32. */
export function asciiToBytes32(text: string): Hex {
  if (text.length === 0 || text.length > 32 || !/^[\x20-\x7e]+$/.test(text)) {
    throw new Error(`strategy id must be 1..32 printable ASCII characters: ${JSON.stringify(text)}`);
  }
  return `0x${Buffer.from(text, 'ascii').toString('hex').padEnd(64, '0')}`;
}
