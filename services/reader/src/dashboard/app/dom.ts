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
    else if (k === 'style') el.setAttribute('style', String(v));
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
export const time = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
export const sign = (n: number) => (n > 0 ? 'pos' : n < 0 ? 'neg' : '');
