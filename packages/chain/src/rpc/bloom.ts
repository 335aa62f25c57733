import { type Hex, hexToBytes, keccak256 } from 'viem';
import type { LogFilter } from './logs.js';

/**
 * A block header's logsBloom (2048 bits): every log's address and topics set three bits each,
 * from the first three 16-bit words of their keccak256 (the yellow paper's M3:2048, geth's
 * bloomValues). A bloom that lacks a value's bits proves the block has no log with it.
 */

/** The three (byte index, bit mask) pairs one value sets. */
type Bits = readonly (readonly [number, number])[];

function bitsOf(value: Hex): Bits {
  const h = hexToBytes(keccak256(value));
  const out: [number, number][] = [];
  for (let i = 0; i < 6; i += 2) {
    const bit = ((h[i]! << 8) | h[i + 1]!) & 0x7ff;
    out.push([255 - (bit >> 3), 1 << (h[i + 1]! & 7)]);
  }
  return out;
}

const has = (bloom: Uint8Array, bits: Bits) => bits.every(([i, m]) => (bloom[i]! & m) !== 0);

/** A filter compiled to bloom bits: OR within a position, AND across positions. */
export interface BloomFilter {
  /** Alternatives per position (address, topic0, topic1 and topic2 when filtered). */
  readonly positions: readonly (readonly Bits[])[];
}

export function compileBloomFilter(filter: LogFilter): BloomFilter {
  const positions: Bits[][] = [];
  if (filter.address) positions.push(filter.address.map((a) => bitsOf(a)));
  positions.push(filter.topic0.map((t) => bitsOf(t)));
  if (filter.topic1) positions.push(filter.topic1.map((t) => bitsOf(t)));
  if (filter.topic2) positions.push(filter.topic2.map((t) => bitsOf(t)));
  return { positions };
}

/** False when the bloom proves the block has no log matching the filter; true when it may. */
export function bloomMayMatch(bloom: Hex | Uint8Array, filter: BloomFilter): boolean {
  const bytes = typeof bloom === 'string' ? hexToBytes(bloom) : bloom;
  if (bytes.length !== 256) return true; // not a bloom: it proves nothing
  return filter.positions.every((alts) => alts.some((bits) => has(bytes, bits)));
}

/** The bloom of these logs (what a block holding exactly them carries), for tests. */
export function bloomOf(logs: readonly { address: Hex; topics: readonly Hex[] }[]): Hex {
  const b = new Uint8Array(256);
  for (const l of logs) for (const v of [l.address, ...l.topics]) for (const [i, m] of bitsOf(v)) b[i]! |= m;
  return `0x${Buffer.from(b).toString('hex')}` as Hex;
}
