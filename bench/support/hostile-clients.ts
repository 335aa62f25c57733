/**
 * The hostile side of `npm run bench:hostile` (bench/hostile.ts), run as a process of its own so
 * its sockets and timers never delay the ordinary clients' measurements in the bench's process.
 *
 * Started with `--import tsx bench/support/hostile-clients.ts` and an IPC channel; its settings
 * are one JSON argument (HostileSettings). Every kind of hostile client runs for `seconds`, each
 * from the loopback addresses `addresses` in turn (bound as the socket's local address, so the
 * reader's per-address caps see many clients): then every socket it holds is destroyed, its
 * counts are sent to the parent (HostileCounts) and it exits. The parent may send
 * `{ oldest: <Last-Event-ID> }` at any time: the oldest cursor the reader still resumes from.
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface HostileSettings {
  /** The reader, `http://127.0.0.1:PORT`. */
  url: string;
  seconds: number;
  /** Loopback source addresses by kind, one client each (127.0.11.1 …): no kind takes another's slots. */
  addresses: Record<HostileKind, string[]>;
  vaults: string[];
  /** The oldest retained stream cursor (Last-Event-ID) at the start. */
  oldest: string;
  /** Concurrent loops / sockets held, by kind. */
  heads: number;
  earlyCloses: number;
  slowReaders: number;
  slowloris: number;
  replays: number;
  /** How long one replay reads before it closes and starts again from the oldest id, ms. */
  replayMs: number;
}

export const HOSTILE_KINDS = ['head', 'early close', 'slow reader', 'slowloris', 'replay'] as const;
export type HostileKind = (typeof HOSTILE_KINDS)[number];

/** What each kind did: requests (or sockets) made, and how they ended. */
export type HostileCounts = Record<string, Record<string, number>>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runHostile(s: HostileSettings, counts: HostileCounts): Promise<void> {
  const target = new URL(s.url);
  const host = target.hostname;
  const port = Number(target.port);
  const until = Date.now() + s.seconds * 1000;
  const live = () => Date.now() < until;
  const sockets = new Set<Socket>();
  let oldest = s.oldest;
  process.on('message', (m: { oldest?: string }) => {
    if (typeof m.oldest === 'string') oldest = m.oldest;
  });
  const turns = new Map<HostileKind, number>();
  const nextAddress = (kind: HostileKind) => {
    const list = s.addresses[kind];
    const turn = turns.get(kind) ?? 0;
    turns.set(kind, turn + 1);
    return list[turn % list.length]!;
  };
  const vault = () => s.vaults[Math.floor(Math.random() * s.vaults.length)]!;
  const streamPath = () => (Math.random() < 0.5 ? '/v1/stream' : `/v1/vault/${vault()}/stream`);
  const count = (kind: string, what: string) => {
    const k = counts[kind] ?? {};
    counts[kind] = k;
    k[what] = (k[what] ?? 0) + 1;
  };

  /** One request on a socket of its own from `localAddress`; resolves with the status (or 'error'). */
  const once = (
    kind: HostileKind,
    method: string,
    path: string,
    headers: Record<string, string>,
    onResponse?: (res: import('node:http').IncomingMessage, destroy: () => void) => void,
    closeAfterMs?: number,
    lateLabel = 'closed early',
  ) =>
    new Promise<void>((resolve) => {
      const req = request({
        host,
        port,
        method,
        path,
        headers,
        localAddress: nextAddress(kind),
        agent: false,
      });
      let timer: NodeJS.Timeout | undefined;
      let finished = false;
      const done = (what: string) => {
        if (finished) return;
        finished = true;
        if (timer) clearTimeout(timer);
        count(kind, what);
        resolve();
      };
      if (closeAfterMs !== undefined)
        timer = setTimeout(() => {
          req.destroy();
          done(lateLabel);
        }, closeAfterMs);
      req.on('response', (res) => {
        if (onResponse) onResponse(res, () => req.destroy());
        else res.resume();
        res.on('end', () => done(String(res.statusCode)));
        res.on('close', () => done(String(res.statusCode)));
        res.on('error', () => {});
      });
      req.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? 'error'));
      req.end();
    });

  /** HEAD of the stream routes (must never open a stream). */
  const heads = async () => {
    while (live()) await once('head', 'HEAD', streamPath(), {}, undefined, 10_000, 'no answer in 10 s');
  };
  /** A stream GET closed 0–20 ms after it was sent: mostly during the reader's open(). */
  const earlyCloses = async () => {
    while (live()) await once('early close', 'GET', streamPath(), {}, undefined, Math.random() * 20);
  };
  /** Reads from the oldest retained id as fast as it can for replayMs, then closes. */
  const replays = async () => {
    while (live()) {
      let bytes = 0;
      await once(
        'replay',
        'GET',
        '/v1/stream',
        { 'last-event-id': oldest },
        (res, destroy) => {
          res.on('data', (b: Buffer) => {
            bytes += b.length;
          });
          setTimeout(destroy, s.replayMs);
        },
        s.replayMs + 1_000,
        'read for replayMs',
      );
      counts.replay ??= {};
      counts.replay.bytes = (counts.replay.bytes ?? 0) + bytes;
      if (bytes === 0) await sleep(200);
    }
  };
  /** A stream from the oldest id whose socket is never read: the reader's write deadline must end it. */
  const slowReader = async () => {
    while (live()) {
      const socket = connect({ host, port, localAddress: nextAddress('slow reader') });
      sockets.add(socket);
      socket.pause();
      socket.write(
        `GET /v1/stream HTTP/1.1\r\nHost: ${host}\r\nAccept: text/event-stream\r\nLast-Event-ID: ${oldest}\r\n\r\n`,
      );
      count('slow reader', 'opened');
      await new Promise<void>((resolve) => {
        socket.on('close', () => resolve());
        socket.on('error', () => {});
      });
      sockets.delete(socket);
      if (live()) count('slow reader', 'closed by the reader');
      await sleep(100);
    }
  };
  /** Request headers one byte a second: the reader's header deadline must end it. */
  const slowloris = async (i: number) => {
    await sleep((i * 37) % 1000);
    while (live()) {
      const socket = connect({ host, port, localAddress: nextAddress('slowloris') });
      sockets.add(socket);
      socket.on('data', () => {});
      socket.on('error', () => {});
      const text = `GET /v1/vaults HTTP/1.1\r\nHost: ${host}\r\nX-Slow: ${'a'.repeat(200)}\r\n\r\n`;
      count('slowloris', 'opened');
      let at = 0;
      const timer = setInterval(() => {
        if (socket.destroyed || at >= text.length) return;
        socket.write(text[at++]!);
      }, 1_000);
      await new Promise<void>((resolve) => socket.on('close', () => resolve()));
      clearInterval(timer);
      sockets.delete(socket);
      if (live()) count('slowloris', 'closed by the reader');
      await sleep(100);
    }
  };

  const loops: Promise<void>[] = [];
  for (let i = 0; i < s.heads; i++) loops.push(heads());
  for (let i = 0; i < s.earlyCloses; i++) loops.push(earlyCloses());
  for (let i = 0; i < s.replays; i++) loops.push(replays());
  for (let i = 0; i < s.slowReaders; i++) loops.push(slowReader());
  for (let i = 0; i < s.slowloris; i++) loops.push(slowloris(i));
  // At the end every held socket goes (the hostile clients leave).
  const ender = setTimeout(() => {
    for (const socket of sockets) socket.destroy();
  }, s.seconds * 1000);
  await Promise.all(loops);
  clearTimeout(ender);
  for (const socket of sockets) socket.destroy();
}

if (process.send) {
  const settings = JSON.parse(process.argv[2] ?? '{}') as HostileSettings;
  const counts: HostileCounts = {};
  await runHostile(settings, counts);
  const cpu = process.cpuUsage();
  process.send({ counts, cpuSeconds: (cpu.user + cpu.system) / 1e6 }, () => process.exit(0));
}
