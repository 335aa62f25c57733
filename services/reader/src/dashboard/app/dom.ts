/// <reference lib="dom" />

/** Small DOM helpers: every value goes in as text (never HTML), so no field can inject markup. */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v);
    else if (k === 'class') el.className = String(v);
    // Through the CSSOM: a style attribute set as markup is refused by the page's CSP.
    else if (k === 'style') el.style.cssText = String(v);
    else if (k in el && k !== 'list') (el as unknown as Record<string, unknown>)[k] = v;
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'number' ? String(c) : c);
  }
}

/** Replaces the children of the element with id `id`. */
export function fill(id: string, ...children: Child[]): HTMLElement {
  const el = byId(id);
  el.replaceChildren();
  append(el, children);
  return el;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} missing`);
  return el as T;
}

const money = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  maximumFractionDigits: 2,
});
const signed = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  maximumFractionDigits: 2,
  signDisplay: 'exceptZero',
});
export const usd = (n: number) => money.format(n);
export const usdSigned = (n: number) => signed.format(n);
export const price = (n: number) => (n >= 1000 ? n.toFixed(2) : n >= 1 ? n.toPrecision(6) : n.toPrecision(4));
export const short = (hex: string) => `${hex.slice(0, 6)}…${hex.slice(-4)}`;
/** How times read: UTC (the default, as the chain's) or the browser's local time. */
export type Zone = 'utc' | 'local';
let zone: Zone = 'utc';
export const setZone = (z: Zone) => {
  zone = z;
};
export const zoneLabel = () => (zone === 'utc' ? 'UTC' : 'local');
const pad = (n: number) => String(n).padStart(2, '0');
/** `YYYY-MM-DD HH:MM:SS` in the chosen zone. */
export const time = (ms: number) => {
  const d = new Date(ms);
  if (zone === 'utc') return d.toISOString().replace('T', ' ').slice(0, 19);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};
/** A `datetime-local` input's value read in the chosen zone, as an ISO instant. */
export const instant = (v: string): string | undefined => {
  if (!v) return undefined;
  const full = v.length === 16 ? `${v}:00` : v;
  return zone === 'utc' ? `${full}Z` : new Date(full).toISOString();
};
/** Whole tokens for people: up to 6 significant decimals, grouped ("1,234.5", "0.000123"). */
export const tokens = (amount: string) => {
  const neg = amount.startsWith('-');
  const [int = '0', frac = ''] = amount.replace('-', '').split('.');
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const lead = frac.match(/^0*/)?.[0].length ?? 0;
  const shown = frac.slice(0, int === '0' ? lead + 6 : 6).replace(/0+$/, '');
  return `${neg ? '-' : ''}${grouped}${shown ? `.${shown}` : ''}`;
};
export const sign = (n: number) => (n > 0 ? 'pos' : n < 0 ? 'neg' : '');
/** A fraction as a percentage, 2 decimals ("12.35%"). */
export const pct = (fraction: number) => `${(fraction * 100).toFixed(2)}%`;
/** A span of block time for people, its two largest units ("3 d 4 h", "5 h 12 min", "42 s"). */
export const duration = (ms: number) => {
  const s = Math.floor(ms / 1000);
  const [d, hh, mm, ss] = [
    Math.floor(s / 86_400),
    Math.floor((s % 86_400) / 3600),
    Math.floor((s % 3600) / 60),
    s % 60,
  ];
  return d > 0 ? `${d} d ${hh} h` : hh > 0 ? `${hh} h ${mm} min` : mm > 0 ? `${mm} min ${ss} s` : `${ss} s`;
};
