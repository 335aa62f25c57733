import type { LedgerRow } from '@vault-yield/client';
import { activityTypes } from '@vault-yield/domain';
import type { Projector } from '@vault-yield/projector';
import { encodeStreamCursor, parseStreamCursor } from '@vault-yield/reader';
import { STREAM_CHANNEL } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { startReader, type TestReader } from '@vault-yield/test-kit/reader';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopics, projector, publish } from '../projector/support.js';
import { openStream, pausedStream, type RawStream, rawRequest, seeded, sleep, until } from './support.js';

/**
 * A stream slot is never lost (issue #42): HEAD opens no stream; a client that leaves while its
 * stream is being opened, or stops reading once it is open, gives its slot back; a forged
 * notification only wakes the streams. Real reader, Postgres, Kafka and projector; loopback only.
 */

const gen = createHistoryGenerator({ vaults: 3, seed: 23, recordsPerBlock: 4 });
/** Clients are told apart by X-Forwarded-For (one trusted hop): a key for each, none refused by the caps while churning. */
const proxied = { ratePerSecond: 0, burst: 1, trustedProxies: { kind: 'hops' as const, hops: 1 } };
const PER_CLIENT = 8;
const stats = (r: TestReader) => r.reader.hub.stats();
const openGauge = async (r: TestReader) =>
  Number(/^reader_streams_open (\d+)$/m.exec(await r.reader.registry.metrics())?.[1]);

describe('stream slots (HEAD, clients that leave or stop reading, forged notifications)', () => {
  let db: TestDatabase;
  let proj: Projector;
  let topic: string;
  const brokers = kafkaBrokers();
  const opened: RawStream[] = [];

  beforeAll(async () => {
    topic = uniqueTopic('slots');
    await createTopic(brokers, topic);
    db = await createTestDatabase('slots');
    proj = projector({ brokers, url: db.writerUrl, schema: db.schema, topic, group: 'live' });
    await proj.start();
    // Enough commits that replaying them outruns a client's and the server's socket buffers.
    await publish(brokers, topic, gen.take(12_000));
    await proj.caughtUp();
  }, 180_000);

  afterAll(async () => {
    for (const s of opened) s.close();
    await proj?.stop();
    await db?.drop();
    await deleteTopics();
  });

  it('HEAD answers the headers and opens nothing; 1,000 HEADs and 1,000 GETs cut during open() leave no slot', async () => {
    const reader = await startReader(db, {
      rateLimit: proxied,
      streams: { maxTotal: 1_000, perClient: PER_CLIENT, heartbeatMs: 1_000, writeTimeoutMs: 30_000 },
      http: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 5_000,
        maxConnections: 2_000,
      },
    });
    try {
      const vault = gen.vaults()[0]!.vault;
      const head = await fetch(`${reader.url}/v1/vault/${vault}/stream`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(await head.text()).toBe('');
      expect(stats(reader).streams).toBe(0);

      const random = seeded(42);
      const paths = [`/v1/vault/${vault}/stream`, '/v1/stream', `/v1/stream?vault=${vault}`];
      const port = Number(new URL(reader.url).port);
      let sent = 0;
      const churn = async (method: 'HEAD' | 'GET', n: number) => {
        for (let i = 0; i < n; i += 50)
          await Promise.all(
            Array.from({ length: Math.min(50, n - i) }, (_, k) => {
              sent++;
              return rawRequest(port, {
                method,
                path: paths[(i + k) % paths.length]!,
                headers: { 'X-Forwarded-For': `10.1.0.${(i + k) % 100}` },
                // Cut at a random point of open() (its reads of Postgres take about that long).
                cutAfterMs: random() * 5,
              });
            }),
          );
      };
      await churn('HEAD', 1_000);
      await churn('GET', 1_000);
      expect(sent).toBe(2_000);
      await until(async () => (stats(reader).streams === 0 ? true : undefined), 15_000);
      expect(await openGauge(reader)).toBe(0);
      expect(stats(reader).clients).toBe(0);
      // A client of the churn, and a new one, each get their whole quota, and no more.
      for (const client of ['10.1.0.7', '10.9.9.9']) {
        const streams = await Promise.all(
          Array.from({ length: PER_CLIENT }, () =>
            openStream(`${reader.url}/v1/stream`, { 'X-Forwarded-For': client }),
          ),
        );
        opened.push(...streams);
        expect(streams.map((s) => s.status)).toEqual(Array(PER_CLIENT).fill(200));
        const over = await openStream(`${reader.url}/v1/stream`, { 'X-Forwarded-For': client });
        expect(over.status).toBe(503);
        for (const s of streams) s.close();
      }
      await until(async () => (stats(reader).streams === 0 ? true : undefined), 15_000);
    } finally {
      await reader.stop();
    }
  }, 180_000);

  it('a client that stops reading loses its stream and its slot after the write deadline', async () => {
    const reader = await startReader(db, {
      rateLimit: proxied,
      streams: { maxTotal: 100, perClient: PER_CLIENT, heartbeatMs: 1_000, writeTimeoutMs: 1_000 },
    });
    try {
      // Resumed from the first commit: every commit since is sent at once, to a socket never read.
      const paused = await pausedStream(Number(new URL(reader.url).port), '/v1/stream', {
        'Last-Event-ID': encodeStreamCursor({ seq: 0n, pos: 0 }),
        'X-Forwarded-For': '10.2.0.1',
      });
      expect(paused.head).toBe('HTTP/1.1 200 OK');
      await until(async () => (stats(reader).streams === 0 ? true : undefined), 15_000);
      expect(await openGauge(reader)).toBe(0);
      // The connection was cut: read on, the client meets its end.
      paused.socket.resume();
      await paused.closed;
    } finally {
      await reader.stop();
    }
  }, 60_000);

  it('a NOTIFY with a huge seq from another login neither resets nor stalls a stream', async () => {
    const reader = await startReader(db, {
      streams: { maxTotal: 100, perClient: 100, heartbeatMs: 1_000, writeTimeoutMs: 30_000 },
    });
    const other = new pg.Client({ connectionString: db.readerUrl });
    await other.connect();
    try {
      const vault = gen.vaults()[1]!.vault;
      const s = await openStream(`${reader.url}/v1/vault/${vault}/stream`);
      opened.push(s);
      await s.waitFor(1);
      const before = new Set(await ledgerIds(reader, vault));
      await other.query('select pg_notify($1, $2)', [
        STREAM_CHANNEL,
        JSON.stringify({ schema: db.schema, seq: '999999999999999999', vaults: [vault] }),
      ]);
      await publish(brokers, topic, gen.take(60));
      await proj.caughtUp();
      const expected = (await ledgerIds(reader, vault)).filter((id) => !before.has(id));
      expect(expected.length).toBeGreaterThan(0);
      const rows = () =>
        s.events.filter((e) => e.event === 'ledger').map((e) => (JSON.parse(e.data) as LedgerRow).id);
      await until(async () => (rows().length >= expected.length ? true : undefined), 15_000);
      expect(rows()).toEqual(expected);
      // The head is the database's, and a heartbeat's catch-up read since reset nothing.
      const { rows: dbHead } = await other.query<{ head: string }>(
        `select coalesce(max(seq), 0)::text as head from ${db.schema}.stream_commits`,
      );
      expect(reader.reader.hub.head().toString()).toBe(dbHead[0]!.head);
      const polls = s.comments;
      await until(async () => (s.comments > polls ? true : undefined), 5_000);
      expect(s.events.map((e) => e.event)).not.toContain('reset');
      expect(reader.reader.hub.epoch()).toBe(0);
    } finally {
      await other.end();
      await reader.stop();
    }
  }, 60_000);

  it("a client's stream reads take its request slots (CLIENT_CONCURRENCY), as its requests do", async () => {
    const reader = await startReader(db, {
      rateLimit: proxied,
      concurrency: { perClient: 1, queue: 0 },
      statementTimeoutMs: 120_000,
      streams: { maxTotal: 100, perClient: PER_CLIENT, heartbeatMs: 1_000, writeTimeoutMs: 30_000 },
    });
    const locker = new pg.Client({ connectionString: db.writerUrl });
    await locker.connect();
    const a = { 'X-Forwarded-For': '10.3.0.1' };
    try {
      const mine = await openStream(`${reader.url}/v1/stream`, a);
      const other = await openStream(`${reader.url}/v1/stream`, { 'X-Forwarded-For': '10.3.0.2' });
      opened.push(mine, other);
      expect([mine.status, other.status]).toEqual([200, 200]);
      // A request of the client waits on a lock (a table the projector does not write): its one slot is taken.
      await locker.query('begin');
      await locker.query(`lock table ${db.schema}.universe_pairs in access exclusive mode`);
      const held = fetch(`${reader.url}/v1/universe/pairs`, { headers: a });
      await until(async () => {
        const { rows } = await locker.query(
          `select 1 from pg_locks where not granted and relation = '${db.schema}.universe_pairs'::regclass`,
        );
        return rows.length > 0 ? true : undefined;
      }, 10_000);
      // Opening a stream reads Postgres: refused like any request beyond the client's cap.
      const over = await fetch(`${reader.url}/v1/stream`, { headers: a });
      expect(over.status).toBe(429);
      await over.body?.cancel();
      // A commit: the other client's stream reads it; this client's stream waits for its slot.
      await publish(brokers, topic, gen.take(30));
      await proj.caughtUp();
      const ledger = (s: RawStream) => s.events.filter((e) => e.event === 'ledger').length;
      await until(async () => (ledger(other) > 0 ? true : undefined), 15_000);
      const quiet = other.comments;
      await until(async () => (other.comments > quiet ? true : undefined), 10_000);
      expect(ledger(mine)).toBe(0);
      // The slot freed, the stream reads what it missed.
      await locker.query('rollback');
      expect((await held).status).toBe(200);
      await until(async () => (ledger(mine) === ledger(other) ? true : undefined), 15_000);
    } finally {
      await locker.end();
      await reader.stop();
    }
  }, 60_000);

  it("a request waiting for its client's slot is dropped when the client leaves: no stream opens on a closed socket", async () => {
    const reader = await startReader(db, {
      rateLimit: proxied,
      concurrency: { perClient: 1, queue: 16 },
      statementTimeoutMs: 120_000,
      streams: { maxTotal: 100, perClient: PER_CLIENT, heartbeatMs: 1_000, writeTimeoutMs: 30_000 },
    });
    const locker = new pg.Client({ connectionString: db.writerUrl });
    await locker.connect();
    const a = { 'X-Forwarded-For': '10.4.0.1' };
    try {
      // The client's one slot is held by a request waiting on a lock.
      await locker.query('begin');
      await locker.query(`lock table ${db.schema}.universe_pairs in access exclusive mode`);
      const held = fetch(`${reader.url}/v1/universe/pairs`, { headers: a });
      await until(async () => {
        const { rows } = await locker.query(
          `select 1 from pg_locks where not granted and relation = '${db.schema}.universe_pairs'::regclass`,
        );
        return rows.length > 0 ? true : undefined;
      }, 10_000);
      // Streams of the same client wait in line for that slot; each client leaves meanwhile.
      const port = Number(new URL(reader.url).port);
      await Promise.all(
        Array.from({ length: 5 }, () =>
          rawRequest(port, { method: 'GET', path: '/v1/stream', headers: a, cutAfterMs: 300 }),
        ),
      );
      await locker.query('rollback');
      expect((await held).status).toBe(200);
      // Were they opened (the request's abort signal made after its socket closed never fires),
      // each would hold a slot until a write deadline: none may open at all.
      let most = 0;
      for (const stop = Date.now() + 2_000; Date.now() < stop; await sleep(5))
        most = Math.max(most, stats(reader).streams);
      expect(most).toBe(0);
      expect(stats(reader).clients).toBe(0);
    } finally {
      await locker.end();
      await reader.stop();
    }
  }, 60_000);

  it('a replay is read in pages bounded by rows (a large commit in slices), kept in a cache bounded by bytes, and loses no row', async () => {
    const q = new pg.Client({ connectionString: db.writerUrl });
    await q.connect();
    try {
      const count = async (sql: string, values: unknown[] = []) =>
        Number((await q.query<{ n: string }>(sql, values)).rows[0]!.n);
      const rows = await count(
        `select count(*)::text as n from ${db.schema}.ledger where commit_xid is not null and type = any($1)`,
        [activityTypes],
      );
      const largest = await count(
        `select max(n)::text as n from (select count(*) as n from ${db.schema}.ledger
          where commit_xid is not null and type = any($1) group by commit_xid) c`,
        [activityTypes],
      );
      expect(largest).toBeGreaterThan(1_000); // the history's first commits hold thousands of rows
      const replay = async (
        streams: { pageRows: number; pageBytes?: number; cacheBytes: number },
        from = encodeStreamCursor({ seq: 0n, pos: 0 }),
        expected = rows,
      ) => {
        const reader = await startReader(db, {
          // (paging is under test, not the replay budget: unbounded)
          streams: {
            maxTotal: 10,
            perClient: 10,
            heartbeatMs: 1_000,
            writeTimeoutMs: 30_000,
            replayBytesPerSecond: 0,
            ...streams,
          },
        });
        try {
          const s = await openStream(`${reader.url}/v1/stream`, { 'Last-Event-ID': from });
          opened.push(s);
          let most = 0;
          const ledger = () => s.events.filter((e) => e.event === 'ledger').length;
          await until(
            async () => {
              most = Math.max(most, stats(reader).cache.bytes);
              return ledger() >= expected ? true : undefined;
            },
            60_000,
            20,
          );
          // The commit's snapshots after its last row.
          await until(async () => (s.events.at(-1)?.event === 'snapshot' ? true : undefined), 10_000);
          s.close();
          return {
            most,
            cache: stats(reader).cache,
            events: s.events.map((e) => `${e.id} ${e.event} ${e.data}`),
          };
        } finally {
          await reader.stop();
        }
      };
      // Whole commits, whatever their rows (the reference).
      const whole = await replay({ pageRows: 1_000_000, pageBytes: 1024 ** 3, cacheBytes: 1024 ** 3 });
      // 100 rows a page, a 1 MiB cache: the same events, and no whole large commit in memory.
      const sliced = await replay({ pageRows: 100, cacheBytes: 1024 ** 2 });
      expect(sliced.events.length).toBe(whole.events.length);
      expect(sliced.events).toEqual(whole.events);
      expect(sliced.most).toBeLessThanOrEqual(1024 ** 2);
      expect(whole.most).toBeGreaterThan(1024 ** 2);
      // No read held a whole large commit: 100 rows at a time (and a page's snapshots).
      expect(sliced.cache.largest * 10).toBeLessThan(whole.cache.largest);
      // Resumed inside a large commit: the rest of it, then the rest.
      const mid = whole.events.findIndex((e) => (parseStreamCursor(e.split(' ')[0]!)?.pos ?? 0) > 1_000);
      expect(mid).toBeGreaterThan(0);
      const rest = whole.events.slice(mid + 1);
      const resumed = await replay(
        { pageRows: 100, cacheBytes: 1024 ** 2 },
        whole.events[mid]!.split(' ')[0]!,
        rest.filter((e) => e.split(' ')[1] === 'ledger').length,
      );
      expect(resumed.events).toEqual(rest);
    } finally {
      await q.end();
    }
  }, 180_000);
});

/** A vault's ledger row ids as GET events serves them, oldest first. */
async function ledgerIds(reader: TestReader, vault: string): Promise<string[]> {
  const ids: string[] = [];
  let path: string | null = `/v1/vault/${vault}/events?limit=500`;
  while (path) {
    const r = await reader.get(path);
    expect(r.status).toBe(200);
    ids.push(...(r.body as LedgerRow[]).map((x) => x.id));
    const next = r.headers.get('x-next-cursor');
    path = next ? `/v1/vault/${vault}/events?limit=500&cursor=${encodeURIComponent(next)}` : null;
  }
  return ids.reverse();
}
