import type { Address, Hex } from 'viem';
import { addressWord, bigWord, smallWord, WORD } from '../decode/word.js';
import { BlockValuationError } from './errors.js';

/**
 * A word array as the lens returns it (packages/contracts VaultLens.sol), read in order. The hex is
 * turned into bytes once and each word read from them (decode/word.ts): ≈ 1 KB less garbage a
 * record in the indexer's backfill than a slice, a "0x" concatenation and a BigInt parse a word.
 */
export class Words {
  private at = 0;
  private readonly bytes: Buffer;
  private readonly count: number;

  constructor(hex: Hex) {
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
    return bigWord(this.bytes, this.take(), false);
  }

  /** The next word as a two's-complement int256. */
  signed(): bigint {
    return bigWord(this.bytes, this.take(), true);
  }

  /** The next word as a two's-complement int256, as a number (ticks). */
  int(): number {
    const o = this.take();
    return smallWord(this.bytes, o, true) ?? Number(bigWord(this.bytes, o, true));
  }

  /** The next word as an address (its last 20 bytes, lowercase). */
  address(): Address {
    return addressWord(this.bytes, this.take());
  }

  /** Every word was read. */
  get done(): boolean {
    return this.at === this.count;
  }
}
