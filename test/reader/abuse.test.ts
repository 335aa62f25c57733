import { connect, type Socket } from 'node:net';
import { createLogger } from '@vault-yield/common';
import { createReader, type ReaderConfig, readerConfig } from '@vault-yield/reader';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The reader's HTTP server holds against a client that misbehaves on purpose: slow headers,
 * connections held open, more connections than it may have. Raw sockets, so nothing in between
 * (fetch's own pooling and time-outs) hides what the server does.
 */

interface Raw {
  socket: Socket;
  /** Everything the server sent, so far. */
  received: () => string;
  /** Resolves when the server (or the network) closed the connection. */
  closed: Promise<void>;
}

function open(url: string): Promise<Raw> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let data = '';
    socket.on('data', (d) => {
      data += d.toString('latin1');
    });
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('error', () => {});
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

/** Waits for `raw` to have received a whole response head (or to be closed). */
async function head(raw: Raw): Promise<string> {
  let settled = false;
  void raw.closed.then(() => {
    settled = true;
  });
  while (!raw.received().includes('\r\n\r\n') && !settled) await new Promise((r) => setTimeout(r, 10));
  return raw.received();
}

describe('reader HTTP limits against abuse', () => {
  let db: TestDatabase;
  /** A reader on a free port that no other client has connected to yet. */
  async function startReader(overrides: Partial<ReaderConfig>) {
    const reader = createReader(
      readerConfig(db.readerUrl, {
        schema: db.schema,
        port: 0,
        logger: createLogger({ name: 'reader-test', level: 'silent' }),
        ...overrides,
      }),
    );
    const { url } = await reader.start();
    return { url, stop: () => reader.stop() };
  }
  beforeAll(async () => {
    db = await createTestDatabase('reader-abuse');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('a client that never finishes its headers gets 408 and is cut off (slow loris)', async () => {
    const r = await startReader({
      http: {
        headersTimeoutMs: 300,
        requestTimeoutMs: 1_000,
        keepAliveTimeoutMs: 5_000,
        maxConnections: 100,
      },
    });
    try {
      const raw = await open(r.url);
      raw.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n'); // and never the blank line
      // A header line now and then does not keep it alive: the deadline is for all headers.
      const drip = setInterval(() => raw.socket.write('X-Slow: 1\r\n'), 50);
      try {
        await raw.closed;
      } finally {
        clearInterval(drip);
      }
      expect(raw.received()).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      await r.stop();
    }
  });

  it('kept-alive connections are announced with their idle time-out and closed after it', async () => {
    const r = await startReader({
      http: {
        headersTimeoutMs: 1_000,
        requestTimeoutMs: 2_000,
        keepAliveTimeoutMs: 1_000,
        maxConnections: 100,
      },
    });
    try {
      const raw = await open(r.url);
      raw.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      const res = await head(raw);
      expect(res).toMatch(/^HTTP\/1\.1 200/);
      expect(res.toLowerCase()).toContain('keep-alive: timeout=1');
      await raw.closed; // idle past the time-out: the server closes it
    } finally {
      await r.stop();
    }
  });

  it('connections beyond the cap are refused at accept; those within it are served', async () => {
    const r = await startReader({
      http: {
        headersTimeoutMs: 5_000,
        requestTimeoutMs: 10_000,
        keepAliveTimeoutMs: 5_000,
        maxConnections: 2,
      },
    });
    const held: Raw[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const raw = await open(r.url);
        raw.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
        expect(await head(raw)).toMatch(/^HTTP\/1\.1 200/); // kept alive: still counted
        held.push(raw);
      }
      const third = await open(r.url);
      third.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      await third.closed;
      expect(third.received()).toBe('');
      // One held connection ends: a new one is served again.
      held.shift()?.socket.destroy();
      for (let tries = 0; ; tries++) {
        expect(tries, 'no connection served after one was freed').toBeLessThan(200);
        const next = await open(r.url);
        next.socket.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        await next.closed;
        if (next.received() !== '') {
          expect(next.received()).toMatch(/^HTTP\/1\.1 200/);
          break;
        }
        // The server may not have seen the destroyed socket's close yet.
        await new Promise((res) => setTimeout(res, 20));
      }
    } finally {
      for (const h of held) h.socket.destroy();
      await r.stop();
    }
  });
});
