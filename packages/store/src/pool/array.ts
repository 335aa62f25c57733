/**
 * A one-dimensional array parameter written as Postgres' array literal (`{a,b,NULL}`) in one join.
 * node-postgres encodes an array parameter element by element — each one quoted, run through two
 * regex replaces and appended to a growing string — which cost the indexer ≈ 1.7 KB of garbage a
 * record for its per-block sequence rows (hex and numbers, which need no quoting at all). The
 * literal is sent as text; `$n::text[]` / `::int8[]` / `::bool[]` parse it as they would the
 * driver's. An element is quoted only where the array syntax needs it: empty, `NULL` in any
 * case, or holding a quote, backslash, brace, comma or white space.
 */
export type ArrayElement = string | number | bigint | boolean | null | undefined;

/** Characters that make an element need double quotes in an array literal. */
const SPECIAL = /[\s"\\{},]/;

function element(v: ArrayElement): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v !== 'string') return String(v);
  if (v.length > 0 && !SPECIAL.test(v) && !(v.length === 4 && v.toUpperCase() === 'NULL')) return v;
  return `"${v.replace(/[\\"]/g, '\\$&')}"`;
}

/** `values` as an array literal. */
export function pgArray(values: readonly ArrayElement[]): string {
  return pgArrayOf(values, (v) => v);
}

/** `values.map(f)` as an array literal, without the intermediate array of elements. */
export function pgArrayOf<T>(values: readonly T[], f: (v: T) => ArrayElement): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) parts[i] = element(f(values[i]!));
  return `{${parts.join(',')}}`;
}
