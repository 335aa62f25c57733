/** A small insertion-ordered cache that drops its oldest entries past `max` (promise-valued). */
export class BoundedCache<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}

  getOrSet(key: string, make: () => V): V {
    const hit = this.map.get(key);
    if (hit !== undefined) return hit;
    const v = make();
    this.map.set(key, v);
    if (this.map.size > this.max) {
      const oldest = this.map.keys().next().value;
      if (oldest !== undefined) this.map.delete(oldest);
    }
    return v;
  }

  delete(key: string): void {
    this.map.delete(key);
  }
}

/** Caches a promise; a rejected one is evicted so the next call retries. */
export function cachedPromise<V>(
  cache: BoundedCache<Promise<V>>,
  key: string,
  make: () => Promise<V>,
): Promise<V> {
  const p = cache.getOrSet(key, make);
  p.catch(() => cache.delete(key));
  return p;
}
