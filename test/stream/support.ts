import { connect, type Socket } from 'node:net';
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

/** A seeded generator of numbers in [0, 1) (mulberry32): the same draws on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const requestText = (method: string, path: string, headers: Record<string, string>) =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;

/**
 * One request on a raw loopback socket, destroyed `cutAfterMs` after it was sent (whatever the
 * server did meanwhile). Resolves once the socket is closed.
 */
export function rawRequest(
  port: number,
  o: { method: string; path: string; headers?: Record<string, string>; cutAfterMs: number },
): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.on('close', () => resolve());
    socket.on('data', () => {});
    socket.once('connect', () => {
      socket.write(requestText(o.method, o.path, o.headers ?? {}));
      setTimeout(() => socket.destroy(), o.cutAfterMs);
    });
  });
}

/**
 * A stream on a raw loopback socket that reads its response's first bytes and then never reads
 * again (its receive buffer fills, then the server's send buffer). `closed` resolves when the
 * server closes the connection.
 */
export function pausedStream(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ socket: Socket; head: string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('error', () => {});
    socket.once('error', reject);
    socket.once('connect', () => socket.write(requestText('GET', path, headers)));
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve({ socket, head: chunk.toString('latin1').split('\r\n')[0] ?? '', closed });
    });
  });
}
