import type { Holding } from './chain.js';

/**
 * The audit's own arithmetic, exact in bigint: USD amounts are integers of 10^-18 dollars. A
 * holding is worth balance × answer / 10^(token decimals + feed decimals); nothing else (no pool
 * math, no fee growth) — the chain did that work when the pool burned and collected.
 */
export const USD_DECIMALS = 18;
const ONE = 10n ** BigInt(USD_DECIMALS);

/** A holding's worth in 10^-18 USD, rounded down (below 10^-18 USD a token). */
export function holdingUsd(h: Holding): bigint {
  return (h.balance * h.answer * ONE) / 10n ** BigInt(h.decimals + h.feedDecimals);
}

/** What the vault holds at the block, in 10^-18 USD. */
export function chainUsd(holdings: readonly Holding[]): bigint {
  return holdings.reduce((sum, h) => sum + holdingUsd(h), 0n);
}

/**
 * A decimal text (`123.45`, `-1e-7`, `0.01`) in 10^-18 USD, exactly: the figure the reader served
 * (a JSON number, as JavaScript prints it) or an operator's tolerance.
 */
export function parseUsd(text: string): bigint {
  const m = /^(-)?(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(text.trim());
  if (!m) throw new TypeError(`not a decimal amount: ${text}`);
  const [, sign, whole = '0', frac = '', exp = '0'] = m;
  const shift = USD_DECIMALS + Number(exp) - frac.length;
  const digits = BigInt(whole + frac);
  const scaled = shift >= 0 ? digits * 10n ** BigInt(shift) : digits / 10n ** BigInt(-shift);
  return sign ? -scaled : scaled;
}

/** A served JSON number in 10^-18 USD (JavaScript prints the shortest text that reads back the same number). */
export const servedUsd = (n: number): bigint => parseUsd(String(n));

/** 10^-18 USD as dollars with `places` decimals, rounded half away from zero. */
export function formatUsd(amount: bigint, places = 6): string {
  const negative = amount < 0n;
  const abs = negative ? -amount : amount;
  const unit = 10n ** BigInt(USD_DECIMALS - places);
  const rounded = (abs + unit / 2n) / unit;
  const text = rounded.toString().padStart(places + 1, '0');
  const out = `${text.slice(0, -places)}.${text.slice(-places)}`;
  return negative && rounded > 0n ? `-${out}` : out;
}

export const absUsd = (a: bigint): bigint => (a < 0n ? -a : a);
