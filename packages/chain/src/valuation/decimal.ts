/** Exact decimal string of value / 10^decimals, trailing zeros trimmed ("1843.5", "1", "0.00000001"). */
export function formatScaled(value: bigint, decimals: number): string {
  if (value < 0n) throw new RangeError(`negative value ${value}`);
  if (!Number.isInteger(decimals) || decimals < 0) throw new RangeError(`bad decimals ${decimals}`);
  if (decimals === 0) return value.toString();
  const s = value.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, -decimals);
  const frac = s.slice(-decimals).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}

/**
 * What a record carries for a feed's answer: the price as a decimal string, or NO_PRICE ("0")
 * when the feed answered zero or a negative value. Such an answer is no price, but the chain
 * accepted the block: the record is written, and the fold keeps the last valid price, flagged
 * (packages/domain TokenPrice.priceInvalid) — never a 0 valuation, never a refused block.
 */
export function priceOfAnswer(answer: bigint, decimals: number): string {
  return answer > 0n ? formatScaled(answer, decimals) : NO_PRICE;
}

export const NO_PRICE = '0';
