import type { AbiParameter, Hex } from 'viem';

/**
 * A decoder for events whose inputs are all static ABI types (address, bool, intN/uintN,
 * bytes1..32): each value is one 32-byte word, read straight from the hex string. It returns the
 * values viem's decodeAbiParameters returns for the same input, or null for anything it does not
 * handle the same way by construction (bad hex, too little data, a dynamic type): the caller then
 * decodes with viem, which also words the error. decode.test.ts checks the equivalence.
 */
export type StaticDecoder = (topics: readonly Hex[], data: Hex) => Record<string, unknown> | null;

/** A word's value, or FALLBACK when viem would refuse it (its error is the reference). */
type WordReader = (word: string) => unknown;
const FALLBACK = Symbol('fallback');

const HEX = /^[0-9a-fA-F]*$/;
const TWO_256 = 1n << 256n;
const TWO_255 = 1n << 255n;

function readerOf(type: string): WordReader | null {
  if (type === 'address') return (w) => `0x${w.slice(24).toLowerCase()}`;
  if (type === 'bool') return null; // viem refuses non-0/1 words with its own error: leave it to viem
  const int = /^(u?)int(\d*)$/.exec(type);
  if (int) {
    const signed = int[1] === '';
    const bits = int[2] === '' ? 256 : Number(int[2]);
    // viem reads the whole word (two's complement for intN), and returns a number up to 48 bits.
    const big = (w: string) => {
      const v = BigInt(`0x${w}`);
      return signed && v >= TWO_255 ? v - TWO_256 : v;
    };
    if (bits > 48) return big;
    return (w) => {
      const n = Number(big(w));
      return Number.isSafeInteger(n) ? n : FALLBACK;
    };
  }
  const fixed = /^bytes(\d+)$/.exec(type);
  if (fixed) {
    const n = Number(fixed[1]);
    if (n < 1 || n > 32) return null;
    return (w) => `0x${w.slice(0, 2 * n).toLowerCase()}`;
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
  const dataChars = data.length * 64;
  return (topics, hex) => {
    if (topics.length !== indexed.length + 1) return null;
    const args: Record<string, unknown> = {};
    for (let i = 0; i < indexed.length; i++) {
      const t = topics[i + 1]!;
      // A topic is exactly one word; anything else goes through viem.
      if (t.length !== 66 || !HEX.test(t.slice(2))) return null;
      const v = indexed[i]!.read(t.slice(2));
      if (v === FALLBACK) return null;
      args[indexed[i]!.name] = v;
    }
    if (typeof hex !== 'string' || !hex.startsWith('0x')) return null;
    const body = hex.slice(2);
    if (data.length === 0) return body === '' ? args : null;
    // Odd lengths, short data and bad digits: viem's answer (an error) is the reference.
    if (body.length % 2 !== 0 || body.length < dataChars || !HEX.test(body)) return null;
    for (let i = 0; i < data.length; i++) {
      const v = data[i]!.read(body.slice(64 * i, 64 * i + 64));
      if (v === FALLBACK) return null;
      args[data[i]!.name] = v;
    }
    return args;
  };
}
