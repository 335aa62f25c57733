import { vaultLensAbi, vaultLensBytecode } from '@vault-yield/contracts';
import { type Address, type Hex, InvalidAddressError, isAddress, toFunctionSelector } from 'viem';

/**
 * The lens' call data, ABI-encoded by hand: the arguments are one address and six flat arrays of
 * words, and viem's generic encoder (hex strings per word, concatenated level by level) took
 * ≈ 3 ms and 2.3 MB for a call of 480 vaults (this: ≈ 0.8 ms, 0.2 MB). Byte for byte what viem's
 * encodeFunctionData (`read`) and encodeDeployData (constructor) give, refusing what viem refuses
 * (calldata.test.ts).
 */

/** The arguments of VaultLens' `read` and of its constructor (the same list). */
export interface LensArgs {
  factory: Address;
  tokens: readonly Address[];
  pools: readonly Address[];
  vaults: readonly Address[];
  /** token0, token1, rewardToken of each vault. */
  vaultTokens: readonly Address[];
  /** Each vault's pool, as its index in `pools`. */
  vaultPools: readonly number[];
  /**
   * Extra ranges to read (positions a vault holds but does not list), flat: per range the vault's
   * index in `vaults`, then tickLower and tickUpper each plus LENS_TICK_BIAS (unsigned words).
   */
  extras: readonly number[];
}

/** What the lens adds to a tick in `extras` (MAX_TICK): every word of the call is unsigned. */
export const LENS_TICK_BIAS = 887_272;

const READ_SELECTOR = toFunctionSelector(
  vaultLensAbi.find((x) => x.type === 'function' && x.name === 'read')!,
);
/** Words before the arrays: the factory and the six arrays' offsets. */
const HEAD_WORDS = 7;
const WORD_CHARS = 64;
const ZERO = 0x30;
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/**
 * Hex text written as Latin-1 bytes into one buffer (zero-filled: the padding is already there),
 * made a string once: no string per word. An address met again in the call (the vaults' tokens
 * repeat) is copied from its first word.
 */
class HexWriter {
  readonly out: Buffer;
  private at: number;
  private readonly seen = new Map<string, number>();
  constructor(prefix: string, words: number) {
    this.out = Buffer.alloc(prefix.length + words * WORD_CHARS, ZERO);
    this.at = this.out.write(prefix, 0, 'latin1');
  }
  /** A uint256 word; viem refuses a value outside the type (here: a negative or fractional index). */
  uint(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`uint256 value out of range: ${n}`);
    this.at += WORD_CHARS;
    for (let p = this.at - 1, x = n; x > 0; p--, x = Math.floor(x / 16)) this.out[p] = HEX_DIGITS[x % 16]!;
  }
  /** An address word, lowercased, after viem's check: the format, then a mixed-case one's EIP-55 checksum. */
  address(a: string): void {
    const start = this.at + WORD_CHARS - 40;
    this.at += WORD_CHARS;
    const first = this.seen.get(a);
    if (first !== undefined) {
      this.out.copyWithin(start, first, first + 40);
      return;
    }
    if (typeof a !== 'string' || a.length !== 42 || a[0] !== '0' || a[1] !== 'x')
      throw new InvalidAddressError({ address: a });
    const out = this.out;
    let changed = false;
    let bad = false;
    for (let i = 0; i < 40; i++) {
      const c = a.charCodeAt(i + 2);
      // Bit 5 lowercases A-F (digits have it already). Past it, only 0-9 and a-f pass here; a
      // character it changed (A-F, or not hex at all) leaves the verdict to viem's isAddress.
      const l = c | 0x20;
      changed ||= c !== l;
      bad ||= !((l >= 0x30 && l <= 0x39) || (l >= 0x61 && l <= 0x66));
      out[start + i] = l;
    }
    if (bad || (changed && !isAddress(a))) throw new InvalidAddressError({ address: a });
    this.seen.set(a, start);
  }
}

/** `prefix` followed by the ABI encoding of the arguments. */
function encode(prefix: string, args: LensArgs): Hex {
  const addressLists = [args.tokens, args.pools, args.vaults, args.vaultTokens];
  const lengths = [...addressLists.map((l) => l.length), args.vaultPools.length, args.extras.length];
  const w = new HexWriter(prefix, HEAD_WORDS + lengths.reduce((n, len) => n + 1 + len, 0));
  w.address(args.factory);
  let offset = HEAD_WORDS * 32;
  for (const len of lengths) {
    w.uint(offset);
    offset += (1 + len) * 32;
  }
  for (const list of addressLists) {
    w.uint(list.length);
    for (const a of list) w.address(a);
  }
  for (const list of [args.vaultPools, args.extras]) {
    w.uint(list.length);
    for (const n of list) w.uint(n);
  }
  return w.out.toString('latin1') as Hex;
}

/** `encodeFunctionData({ abi: vaultLensAbi, functionName: 'read', args })`. */
export function lensReadData(args: LensArgs): Hex {
  return encode(READ_SELECTOR, args);
}

/** `encodeDeployData({ abi: vaultLensAbi, bytecode: vaultLensBytecode, args })`. */
export function lensDeployData(args: LensArgs): Hex {
  return encode(vaultLensBytecode, args);
}
