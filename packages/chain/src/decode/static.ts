import type { AbiParameter, Hex } from 'viem';
import { addressWord, bigWord, smallWord, WORD } from './word.js';

/**
 * A decoder for events whose inputs are all static ABI types (address, bool, intN/uintN,
 * bytes1..32): each value is one 32-byte word. It returns the values viem's decodeAbiParameters
 * returns for the same input, or null for anything it does not handle the same way by
 * construction (bad hex, too little data, a dynamic type): the caller then decodes with viem,
 * which also words the error. static.test.ts checks the equivalence.
 *
 * The hex is written once into a reused buffer (which also checks its digits: Buffer's hex
 * writer stops at the first bad one) and every word is read from the bytes: a word of up to
 * 53 bits — ticks, counts, most amounts — without any text, so a log costs no slices, no
 * regex pass and no "0x" concatenations.
 */
export type StaticDecoder = (topics: readonly Hex[], data: Hex) => Record<string, unknown> | null;

/** A word's value (the word at byte `o` of `b`), or FALLBACK when viem would refuse it (its error is the reference). */
type WordReader = (b: Buffer, o: number) => unknown;
const FALLBACK = Symbol('fallback');

/** The buffer topics and data are written into (grown when a log needs more). */
let scratch = Buffer.allocUnsafe(1024);

/**
 * `hex`'s digits after its "0x" into the scratch buffer: their byte count, or -1 when they are
 * not all hex digits in pairs.
 */
function load(hex: string): number {
  const digits = hex.length - 2;
  if (digits > scratch.length * 2) scratch = Buffer.allocUnsafe(Math.max(digits, scratch.length * 2));
  if (digits === 0) return 0;
  const n = scratch.write(hex.slice(2), 0, 'hex');
  return n * 2 === digits ? n : -1;
}

function readerOf(type: string): WordReader | null {
  if (type === 'address') return addressWord;
  if (type === 'bool') return null; // viem refuses non-0/1 words with its own error: leave it to viem
  const int = /^(u?)int(\d*)$/.exec(type);
  if (int) {
    const signed = int[1] === '';
    const bits = int[2] === '' ? 256 : Number(int[2]);
    // viem reads the whole word (two's complement for intN), and returns a number up to 48 bits.
    if (bits > 48) return (b, o) => bigWord(b, o, signed);
    return (b, o) => smallWord(b, o, signed) ?? FALLBACK;
  }
  const fixed = /^bytes(\d+)$/.exec(type);
  if (fixed) {
    const n = Number(fixed[1]);
    if (n < 1 || n > 32) return null;
    return (b, o) => `0x${b.toString('hex', o, o + n)}`;
  }
  return null;
}

/** A static decoder for an event's inputs, or null when one of them is not a static type. */
export function staticDecoder(inputs: readonly AbiParameter[]): StaticDecoder | null {
  const indexed: { name: string; read: WordReader }[] = [];
  const data: { name: string; read: WordReader }[] = [];
  for (const input of inputs) {
    const read = readerOf(input.type);
    if (!read) return null;
    ((input as { indexed?: boolean }).indexed ? indexed : data).push({ name: input.name ?? '', read });
  }
  const dataBytes = data.length * WORD;
  return (topics, hex) => {
    if (topics.length !== indexed.length + 1) return null;
    const args: Record<string, unknown> = {};
    for (let i = 0; i < indexed.length; i++) {
      const t = topics[i + 1]!;
      // A topic is exactly one word; anything else goes through viem.
      if (t.length !== 2 + 2 * WORD || load(t) !== WORD) return null;
      const v = indexed[i]!.read(scratch, 0);
      if (v === FALLBACK) return null;
      args[indexed[i]!.name] = v;
    }
    if (typeof hex !== 'string' || !hex.startsWith('0x')) return null;
    if (data.length === 0) return hex.length === 2 ? args : null;
    // Odd lengths, short data and bad digits: viem's answer (an error) is the reference.
    const n = load(hex);
    if (n < dataBytes) return null;
    for (let i = 0; i < data.length; i++) {
      const v = data[i]!.read(scratch, WORD * i);
      if (v === FALLBACK) return null;
      args[data[i]!.name] = v;
    }
    return args;
  };
}
