import { createSseParser, type SseEvent } from '@vault-yield/client';

/** One raw stream as a test reads it: its events as they arrive, its status and headers. */
export interface RawStream {
  status: number;
  headers: Headers;
  body: string;
  events: SseEvent[];
  /** Comments (`: …` lines) seen. */
  comments: number;
  /** Resolves when `n` events have arrived (rejects after `ms`). */
  waitFor(n: number, ms?: number): Promise<SseEvent[]>;
  close(): void;
}

/** Opens a stream with fetch and parses it as it arrives (the client's own parser). */
export async function openStream(url: string, headers: Record<string, string> = {}): Promise<RawStream> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal });
  const events: SseEvent[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let comments = 0;
  const out: RawStream = {
    status: res.status,
    headers: res.headers,
    body: '',
    events,
    get comments() {
      return comments;
    },
    waitFor(n, ms = 15_000) {
      if (events.length >= n) return Promise.resolve(events.slice(0, n));
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`stream: ${events.length} events of ${n} after ${ms} ms`)),
          ms,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(t);
            resolve(events.slice(0, n));
          },
        });
      });
    },
    close: () => ac.abort(),
  };
  if (res.status !== 200 || !res.body) {
    out.body = await res.text();
    return out;
  }
  const parser = createSseParser((e) => {
    events.push(e);
    for (const w of [...waiters])
      if (events.length >= w.n) waiters.splice(waiters.indexOf(w), 1) && w.resolve();
  });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        const text = decoder.decode(value, { stream: true });
        comments += (text.match(/^: /gm) ?? []).length;
        parser.push(text);
      }
    } catch {
      // aborted
    }
  })();
  return out;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value (not undefined), or throws after `ms`. */
export async function until<T>(check: () => Promise<T | undefined>, ms = 30_000, every = 100): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`condition not met in ${ms} ms`);
    await sleep(every);
  }
}
