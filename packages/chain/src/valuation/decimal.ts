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
