import type { Address, Hex } from 'viem';
import { BlockValuationError } from './errors.js';

const WORD = 32;
/** 2^21: a 64-bit tail whose high half is below it is a safe integer (< 2^53). */
const SAFE_HIGH = 0x200000;
const TWO_32 = 0x1_0000_0000;

/**
 * A word array as the lens returns it (packages/contracts VaultLens.sol), read in order. The hex is
 * turned into bytes once; a word whose value fits 53 bits (counts, ticks, ids, most balances) is
 * read from its last eight bytes without text, and only a wider one (prices, fee growth) is
 * parsed from its hex — ≈ 3 KB less garbage a vault valued than a slice, a "0x" concatenation
 * and a BigInt parse for every word.
 */
export class Words {
  private at = 0;
  private readonly bytes: Buffer;
  private readonly count: number;

  constructor(private readonly hex: Hex) {
    const digits = hex.length - 2;
    this.bytes = Buffer.from(hex.slice(2), 'hex');
    // Buffer.from stops at the first byte that is not two hex digits: a short result is bad hex.
    if (!hex.startsWith('0x') || digits % (2 * WORD) !== 0 || this.bytes.length * 2 !== digits)
      throw new BlockValuationError(
        `the lens answered ${digits} characters that are no array of 32-byte words`,
      );
    this.count = this.bytes.length / WORD;
  }

  /** The next word's byte offset. */
  private take(): number {
    if (this.at >= this.count) throw new BlockValuationError('the lens answered fewer words than it owes');
    return this.at++ * WORD;
  }

  /** The next word, unsigned. */
  next(): bigint {
    const o = this.take();
    const b = this.bytes;
    if (zeros(b, o, 24)) {
      const high = b.readUInt32BE(o + 24);
      if (high < SAFE_HIGH) return BigInt(high * TWO_32 + b.readUInt32BE(o + 28));
      return b.readBigUInt64BE(o + 24);
    }
    return BigInt(`0x${this.hex.slice(2 + 2 * o, 2 + 2 * (o + WORD))}`);
  }

  /** The next word as a two's-complement int256. */
  signed(): bigint {
    const o = this.at * WORD;
    const b = this.bytes;
    // A small negative number: every byte above the last four 0xff and the last four's sign set.
    if (o + WORD <= b.length && ones(b, o, 28) && b[o + 28]! >= 0x80) {
      this.at++;
      return BigInt(b.readInt32BE(o + 28));
    }
    return BigInt.asIntN(256, this.next());
  }

  /** The next word as a two's-complement int256, as a number (ticks). */
  int(): number {
    const o = this.at * WORD;
    const b = this.bytes;
    if (o + WORD <= b.length) {
      if (ones(b, o, 28) && b[o + 28]! >= 0x80) {
        this.at++;
        return b.readInt32BE(o + 28);
      }
      if (zeros(b, o, 28) && b[o + 28]! < 0x80) {
        this.at++;
        return b.readInt32BE(o + 28);
      }
    }
    return Number(this.signed());
  }

  /** The next word as an address (its last 20 bytes, lowercase). */
  address(): Address {
    const o = this.take();
    return `0x${this.bytes.toString('hex', o + 12, o + WORD)}` as Address;
  }

  /** Every word was read. */
  get done(): boolean {
    return this.at === this.count;
  }
}

/** `n` bytes of `b` from `o` are zero. */
function zeros(b: Buffer, o: number, n: number): boolean {
  for (let i = o; i < o + n; i += 4) if (b.readUInt32BE(i) !== 0) return false;
  return true;
}

/** `n` bytes of `b` from `o` are 0xff. */
function ones(b: Buffer, o: number, n: number): boolean {
  for (let i = o; i < o + n; i += 4) if (b.readUInt32BE(i) !== 0xffffffff) return false;
  return true;
}
