import { connect, type Socket } from 'node:net';
import { createLogger } from '@vault-yield/common';
import { createReader, type Reader, type ReaderConfig, readerConfig } from '@vault-yield/reader';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * No host holds the reader's connections (issue #42 item 7): one address gets at most
 * MAX_CONNECTIONS_PER_ADDRESS sockets, the rest are reset at accept, while another address is
 * served; its sockets come back as they close — by the client, the keep-alive time-out or the
 * headers time-out (slow loris). Real reader on real Postgres, raw sockets from two loopback
 * addresses (127.0.0.1, 127.0.0.2) and from ::1. The wider IPv6 buckets (/56, /48) are
 * property-tested beside the cap (services/reader/src/middleware/connection-cap.test.ts): loopback
 * has one IPv6 address.
 */

const ADMIN_TOKEN = 'connections-test-admin-token';
const HOG = '127.0.0.1';
const OTHER = '127.0.0.2';

interface Raw {
  socket: Socket;
  /** Everything the server sent, so far. */
  received: () => string;
  /** Resolves once a whole response head has arrived. */
  answered: Promise<void>;
  /** Resolves when the server (or the network) closed the connection. */
  closed: Promise<void>;
  isClosed: () => boolean;
}

function open(url: string, localAddress: string): Promise<Raw> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const host = hostname.replace(/^\[(.*)\]$/, '$1'); // [::1]
    const socket = connect({ host, port: Number(port), localAddress });
    let data = '';
    let isClosed = false;
    let onHead = () => {};
    const answered = new Promise<void>((r) => {
      onHead = r;
    });
    socket.on('data', (d) => {
      data += d.toString('latin1');
      if (data.includes('\r\n\r\n')) onHead();
    });
    const closed = new Promise<void>((r) =>
      socket.once('close', () => {
        isClosed = true;
        r();
      }),
    );
    const raw = { socket, received: () => data, answered, closed, isClosed: () => isClosed };
    socket.once('connect', () => resolve(raw));
    // A socket reset at accept may be reset before its connect is reported: it is opened and refused.
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') resolve(raw);
      else reject(err);
    });
  });
}

/** Sends one request and tells whether it was answered or the socket closed with nothing sent. */
async function ask(raw: Raw, path = '/health', close = false): Promise<'served' | 'refused'> {
  raw.socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n${close ? 'Connection: close\r\n' : ''}\r\n`);
  return Promise.race([
    raw.answered.then(() => 'served' as const),
    raw.closed.then(() => (raw.received() === '' ? ('refused' as const) : ('served' as const))),
  ]);
}

/** Opens `n` sockets from `from`, one after the other, and asks each for /health (kept alive). */
async function hog(url: string, n: number, from = HOG) {
  const raws: Raw[] = [];
  for (let i = 0; i < n; i++) raws.push(await open(url, from));
  const outcomes = await Promise.all(raws.map((r) => ask(r)));
  return {
    held: raws.filter((_, i) => outcomes[i] === 'served'),
    refused: raws.filter((_, i) => outcomes[i] === 'refused'),
    all: raws,
  };
}

/** Waits (bounded) until `ok` holds: the server sees a client's close a moment after it happens. */
async function until(what: string, ok: () => boolean) {
  for (let i = 0; !ok(); i++) {
    if (i >= 1_000) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('connections per address', () => {
  let db: TestDatabase;
  const started: Reader[] = [];
  async function startReader(overrides: Partial<ReaderConfig>) {
    const reader = createReader(
      readerConfig(db.readerUrl, {
        schema: db.schema,
        port: 0,
        host: '127.0.0.1',
        adminToken: ADMIN_TOKEN,
        logger: createLogger({ name: 'reader-test', level: 'silent' }),
        ...overrides,
      }),
    );
    started.push(reader);
    const { url } = await reader.start();
    return { reader, url };
  }
  const http = (over: Partial<ReaderConfig['http']> = {}): ReaderConfig['http'] => ({
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 60_000,
    maxConnections: 1_000,
    ...over,
  });
  const cap = (perAddress: number): ReaderConfig['connections'] => ({
    perAddress,
    perIpv6Slash56: 2 * perAddress,
    perIpv6Slash48: 4 * perAddress,
  });

  beforeAll(async () => {
    db = await createTestDatabase('reader-connections');
  });
  afterAll(async () => {
    for (const r of started) await r.stop();
    await db?.drop();
  });

  it('one address opening 3× its cap holds exactly the cap; another address is served meanwhile; the slots come back when the hog closes', async () => {
    const CAP = 4;
    const { reader, url } = await startReader({ http: http(), connections: cap(CAP) });
    const first = await hog(url, 3 * CAP);
    try {
      expect(first.held).toHaveLength(CAP);
      expect(first.refused).toHaveLength(2 * CAP);
      for (const r of first.refused) expect(r.isClosed()).toBe(true);

      // Another address: a database route and the operators' figures, while the hog still holds its cap.
      const other = await open(url, OTHER);
      expect(await ask(other, '/v1/vaults', true)).toBe('served');
      expect(other.received()).toMatch(/^HTTP\/1\.1 200/);
      await other.closed;
      await until('the other address’s socket seen closed', () => reader.connections().open === CAP);
      const scrape = await open(url, OTHER);
      scrape.socket.write(
        `GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nConnection: close\r\n\r\n`,
      );
      await scrape.closed;
      expect(scrape.received()).toMatch(/^HTTP\/1\.1 200/);
      expect(scrape.received()).toMatch(
        new RegExp(`^reader_connections_refused_total\\{reason="address"\\} ${2 * CAP}$`, 'm'),
      );
      expect(scrape.received()).toMatch(new RegExp(`^reader_connections_open ${CAP + 1}$`, 'm')); // the hog's and the scrape's
      for (const h of first.held) expect(h.isClosed()).toBe(false);

      // The hog lets go: its address gets its whole cap again, and no more.
      for (const h of first.held) h.socket.destroy();
      await until('the hog’s sockets seen closed', () => reader.connections().open === 0);
      const second = await hog(url, 3 * CAP);
      expect(second.held).toHaveLength(CAP);
      expect(second.refused).toHaveLength(2 * CAP);
      for (const r of second.all) r.socket.destroy();
      expect(reader.connections().refused).toMatchObject({ address: 4 * CAP, total: 0 });
    } finally {
      for (const r of first.all) r.socket.destroy();
    }
  });

  it('idle kept-alive sockets are closed after the keep-alive time-out, and their address is served again', async () => {
    const CAP = 3;
    const { reader, url } = await startReader({
      http: http({ keepAliveTimeoutMs: 300 }),
      connections: cap(CAP),
    });
    const kept = await hog(url, CAP + 1);
    expect(kept.held).toHaveLength(CAP);
    expect(kept.refused).toHaveLength(1);
    // Nobody closes them but the server.
    await Promise.all(kept.held.map((h) => h.closed));
    await until('the kept-alive sockets seen closed', () => reader.connections().open === 0);
    const again = await open(url, HOG);
    expect(await ask(again, '/health', true)).toBe('served');
  });

  it('slow-loris sockets (headers a byte at a time, or nothing) are cut by the headers time-out and give their address its slots back', async () => {
    const CAP = 2;
    const { reader, url } = await startReader({
      http: http({ headersTimeoutMs: 300, requestTimeoutMs: 1_000 }),
      connections: cap(CAP),
    });
    const drip = await open(url, HOG);
    const silent = await open(url, HOG);
    drip.socket.write('GET /health HTTP/1.1\r\n');
    const header = 'X-Slow: 1\r\n';
    let at = 0;
    const dripping = setInterval(() => {
      drip.socket.write(header[at % header.length] as string);
      at += 1;
    }, 20);
    try {
      // The two hold the address's cap (accepted first: the listen queue is in order): a third is reset at accept.
      const third = await open(url, HOG);
      expect(await ask(third)).toBe('refused');
      // Served elsewhere meanwhile.
      const other = await open(url, OTHER);
      expect(await ask(other, '/health', true)).toBe('served');
      // Neither finishes its headers: both get 408 and are closed.
      await Promise.all([drip.closed, silent.closed]);
      expect(drip.received()).toMatch(/^HTTP\/1\.1 408/);
      expect(silent.received()).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      clearInterval(dripping);
    }
    await until('the slow sockets seen closed', () => reader.connections().open === 0);
    const after = await open(url, HOG);
    expect(await ask(after, '/health', true)).toBe('served');
  });

  it('an IPv6 peer (::1) is capped by its /64 the same way', async () => {
    const CAP = 3;
    const { reader, url } = await startReader({ host: '::1', http: http(), connections: cap(CAP) });
    const six = await hog(url, 3 * CAP, '::1');
    expect(six.held).toHaveLength(CAP);
    expect(six.refused).toHaveLength(2 * CAP);
    expect(reader.connections().refused).toMatchObject({ address: 2 * CAP, ipv6_56: 0, ipv6_48: 0 });
    for (const r of six.all) r.socket.destroy();
  });

  it('sockets beyond HTTP_MAX_CONNECTIONS, whoever opens them, are counted as refused (reason total)', async () => {
    const { reader, url } = await startReader({ http: http({ maxConnections: 2 }), connections: cap(2) });
    const one = await hog(url, 1);
    const two = await hog(url, 2, OTHER);
    expect([one.held.length, two.held.length]).toEqual([1, 1]);
    expect(reader.connections().refused).toMatchObject({ address: 0, total: 1 });
    for (const r of [...one.all, ...two.all]) r.socket.destroy();
  });

  it("behind proxies named by CIDR, the proxy's sockets are not capped (the requests' caps key by the forwarded client)", async () => {
    const CAP = 2;
    const { reader, url } = await startReader({
      http: http(),
      connections: cap(CAP),
      rateLimit: { ratePerSecond: 0, burst: 1, trustedProxies: { kind: 'cidrs', cidrs: [`${HOG}/32`] } },
    });
    const proxy = await hog(url, 3 * CAP);
    expect(proxy.held).toHaveLength(3 * CAP);
    // A client reaching the reader around the proxy is still capped by its own address.
    const direct = await hog(url, CAP + 1, OTHER);
    expect(direct.held).toHaveLength(CAP);
    expect(direct.refused).toHaveLength(1);
    expect(reader.connections().refused.address).toBe(1);
    for (const r of [...proxy.all, ...direct.all]) r.socket.destroy();
  });
});
