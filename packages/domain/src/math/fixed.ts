/**
 * Fixed-point decimals for USD amounts and USD prices: a bigint scaled by 10^18 (`Fixed`).
 *
 * Rounding rule everywhere in this package: round half to even ("banker's rounding"), which is
 * unbiased over the long folds the projector runs. Division truncates nothing silently: every
 * helper here that divides rounds half-even, except `usdToRaw` (documented floor).
 */
export type Fixed = bigint;

export const FIXED_DECIMALS = 18;
export const SCALE: Fixed = 10n ** 18n;

const POW10: bigint[] = Array.from({ length: 80 }, (_, i) => 10n ** BigInt(i));

/** 10^n as a bigint (cached for n < 80). */
export function pow10(n: number): bigint {
  return POW10[n] ?? 10n ** BigInt(n);
}

/** n / d rounded half to even; d must be positive, n may be negative. */
export function divRound(n: bigint, d: bigint): bigint {
  if (d <= 0n) throw new RangeError('divRound: divisor must be positive');
  return roundHalfEven(n, d, d >> 1n);
}

/** ⌊d / 2⌋ for the cached powers of ten: divisions by them skip computing it. */
const HALF_POW10: bigint[] = POW10.map((p) => p >> 1n);

/** n / 10^k rounded half to even (k ≥ 0): `divRound(n, pow10(k))`, with the half cached. */
export function divRoundPow10(n: bigint, k: number): bigint {
  const half = HALF_POW10[k];
  return half === undefined ? divRound(n, pow10(k)) : roundHalfEven(n, POW10[k]!, half);
}

/**
 * n / d rounded half to even, half = ⌊d / 2⌋. Every bigint step allocates, so the remainder is
 * compared with the half rather than doubled: |r| > ⌊d/2⌋ is 2|r| > d for any d, and a tie
 * (2|r| = d) needs d even and |r| = d/2.
 */
function roundHalfEven(n: bigint, d: bigint, half: bigint): bigint {
  const q = n / d;
  const r = n % d;
  // Exact: the common case for amounts at whole units.
  if (r === 0n) return q;
  const a = r < 0n ? -r : r;
  if (a > half || (a === half && (d & 1n) === 0n && (q & 1n) !== 0n)) return n < 0n ? q - 1n : q + 1n;
  return q;
}

const DECIMAL = /^(-)?([0-9]+)(?:\.([0-9]+))?$/;

/**
 * Parses a decimal string ("1843.12345678", "-0.5", "42") exactly. More than 18 fractional digits
 * are rounded half-even to 18.
 */
export function parseFixed(s: string): Fixed {
  // A price as feeds give it ("2000.12345678"): up to 15 digits are a double exactly, so no
  // regex match, no digit string and one BigInt; anything longer is parsed as text below.
  if (s.length <= 16) {
    const n = s.length;
    const neg = n > 0 && s.charCodeAt(0) === 0x2d;
    let i = neg ? 1 : 0;
    let v = 0;
    let digits = 0;
    let frac = -1;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === 0x2e && frac < 0 && digits > 0) frac = 0;
      else if (c >= 0x30 && c <= 0x39) {
        v = v * 10 + (c - 0x30);
        digits++;
        if (frac >= 0) frac++;
      } else break;
    }
    if (i === n && digits > 0 && digits <= 15 && frac !== 0) {
      const x = BigInt(v) * pow10(FIXED_DECIMALS - Math.max(frac, 0));
      return neg ? -x : x;
    }
  }
  const m = DECIMAL.exec(s);
  if (!m) throw new RangeError(`not a decimal string: ${JSON.stringify(s)}`);
  const frac = m[3] ?? '';
  const digits = BigInt((m[2] ?? '0') + frac);
  const v =
    frac.length <= FIXED_DECIMALS
      ? digits * pow10(FIXED_DECIMALS - frac.length)
      : divRound(digits, pow10(frac.length - FIXED_DECIMALS));
  return m[1] ? -v : v;
}

/**
 * value / 10^decimals as an exact decimal, signed, trailing zeros trimmed: "1843.5", "-0.25", "0",
 * "0.00000001". Every decimal text of an integer at a scale (prices, token amounts, USD) is this.
 */
export function formatScaled(value: bigint, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0) throw new RangeError(`bad decimals ${decimals}`);
  const neg = value < 0n;
  const digits = (neg ? -value : value).toString();
  if (decimals === 0) return neg ? `-${digits}` : digits;
  // One conversion to digits, split at the point (no bigint division, no regex): the text of
  // every figure a row or view writes.
  const cut = digits.length - decimals;
  // The fraction's digits are digits[max(cut, 0), end) after its trailing zeros: none, no point.
  const from = Math.max(cut, 0);
  let end = digits.length;
  while (end > from && digits.charCodeAt(end - 1) === 0x30) end--;
  const int = cut > 0 ? digits.slice(0, cut) : '0';
  let body = int;
  if (end > from)
    body = cut >= 0 ? `${int}.${digits.slice(cut, end)}` : `0.${'0'.repeat(-cut)}${digits.slice(0, end)}`;
  return neg ? `-${body}` : body;
}

/** Formats with up to `dp` decimals (rounded half-even), trailing zeros trimmed: "1843.5", "-0.25", "0". */
export function formatFixed(x: Fixed, dp = FIXED_DECIMALS): string {
  const scaled = dp >= FIXED_DECIMALS ? x : divRoundPow10(x, FIXED_DECIMALS - dp);
  return formatScaled(scaled, Math.min(dp, FIXED_DECIMALS));
}

/** Rounds to whole micro-units (6 dp), half-even: the precision of the JSON edge. */
export function toMicros(x: Fixed): bigint {
  return divRoundPow10(x, FIXED_DECIMALS - 6);
}

/** Micro-units (from `toMicros`) to a JSON number. */
export function microsToNumber(m: bigint): number {
  return Number(m) / 1e6;
}

/** A JSON number rounded half-even to 6 dp: the only place a Fixed becomes a float. */
export function fixedToNumber(x: Fixed): number {
  return microsToNumber(toMicros(x));
}

export function divFixed(a: Fixed, b: Fixed): Fixed {
  if (b === 0n) throw new RangeError('divFixed: division by zero');
  return b < 0n ? divRound(-a * SCALE, -b) : divRound(a * SCALE, b);
}

/** x · num / den rounded half-even (den > 0): pro-rata scaling. */
export function scaleBy(x: bigint, num: bigint, den: bigint): bigint {
  return divRound(x * num, den);
}

/** USD value of `raw` token units (`decimals`) at `price` USD per whole token: raw · price / 10^decimals. */
export function tokenValue(raw: bigint, decimals: number, price: Fixed): Fixed {
  return divRoundPow10(raw * price, decimals);
}

/** Raw token units worth `usd` at `price` (floor, so paying it never exceeds `usd`); 0 when price is 0. */
export function usdToRaw(usd: Fixed, decimals: number, price: Fixed): bigint {
  if (price <= 0n || usd <= 0n) return 0n;
  return (usd * pow10(decimals)) / price;
}
