import type { LedgerRow } from '@vault-yield/client';
import type { Projector } from '@vault-yield/projector';
import { encodeStreamCursor, parseStreamCursor } from '@vault-yield/reader';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { blockHash, createHistoryGenerator, type VaultModel } from '@vault-yield/test-kit/history';
import { errorCode, startReader, type TestReader } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopics, projector, publish } from '../projector/support.js';
import { openStream, type RawStream, sleep, until } from './support.js';

/**
 * Live streams on the real stack: a generated history published to Kafka, folded by the projector
 * (which NOTIFYs once per batch, in its transaction), read by a reader that LISTENs on one
 * connection and fans out to its server-sent event streams.
 */

const gen = createHistoryGenerator({ vaults: 3, seed: 11, recordsPerBlock: 3 });
const ledgerTypes = <E extends { event: string }>(rows: E[]) => rows.filter((e) => e.event === 'ledger');

describe('live streams (SSE) on Postgres + Kafka + projector', () => {
  let db: TestDatabase;
  let proj: Projector;
  let reader: TestReader;
  let topic: string;
  const brokers = kafkaBrokers();
  const opened: RawStream[] = [];
  const open = async (path: string, headers: Record<string, string> = {}) => {
    const s = await openStream(`${reader.url}${path}`, headers);
    opened.push(s);
    return s;
  };

  beforeAll(async () => {
    topic = uniqueTopic('stream');
    await createTopic(brokers, topic);
    db = await createTestDatabase('stream');
    proj = projector({ brokers, url: db.writerUrl, schema: db.schema, topic, group: 'live' });
    await proj.start();
    reader = await startReader(db, {
      streams: { maxTotal: 1_500, perClient: 1_500, heartbeatMs: 1_000, writeTimeoutMs: 30_000 },
      http: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 5_000,
        maxConnections: 2_000,
      },
      poolMax: 10,
    });
    await publish(brokers, topic, gen.take(40));
    await proj.caughtUp();
  }, 120_000);

  afterAll(async () => {
    for (const s of opened) s.close();
    await reader?.stop();
    await proj?.stop();
    await db?.drop();
    await deleteTopics();
  });

  /** A vault's ledger as GET events serves it, oldest first. */
  const ledgerOf = async (vault: string): Promise<LedgerRow[]> => {
    const r = await reader.get(`/v1/vault/${vault}/events?limit=500`);
    expect(r.status).toBe(200);
    return (r.body as LedgerRow[]).reverse();
  };

  it('records projected after a stream opened arrive on it in order, each with its cursor', async () => {
    const vault = gen.vaults()[0]!.vault;
    const before = new Set((await ledgerOf(vault)).map((r) => r.id));
    const s = await open(`/v1/vault/${vault}/stream`);
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const [first] = await s.waitFor(1);
    expect(first?.event).toBe('snapshot');
    const snap = JSON.parse(first!.data) as { vault: string; etag: string; snapshot: { vault: string } };
    expect(snap.vault).toBe(vault);
    // The ETag is the snapshot endpoint's: If-None-Match with it is a 304.
    const cond = await reader.get(`/v1/vault/${vault}/snapshot`, { 'If-None-Match': snap.etag });
    expect(cond.status).toBe(304);

    const all = await open('/v1/stream');
    await sleep(200);
    await publish(brokers, topic, gen.take(60));
    await proj.caughtUp();
    const expected = (await ledgerOf(vault)).filter((r) => !before.has(r.id));
    expect(expected.length).toBeGreaterThan(0);
    await until(async () => (ledgerTypes(s.events).length >= expected.length ? true : undefined), 15_000);
    const got = ledgerTypes(s.events).map((e) => (JSON.parse(e.data) as LedgerRow).id);
    expect(got).toEqual(expected.map((r) => r.id));
    // The last event is the vault's snapshot as it stands now.
    await until(async () => {
      const last = s.events.at(-1);
      return last?.event === 'snapshot' ? true : undefined;
    }, 5_000);
    const now = await reader.get(`/v1/vault/${vault}/snapshot`);
    // (compression weakens the served ETag: W/ prefixed)
    expect(JSON.parse(s.events.at(-1)!.data).etag).toBe(now.headers.get('etag')?.replace(/^W\//, ''));
    // Ids: stream cursors, strictly increasing.
    const ids = s.events.map((e) => parseStreamCursor(e.id!)!);
    for (let i = 1; i < ids.length; i++) {
      const [a, b] = [ids[i - 1]!, ids[i]!];
      expect(b.seq > a.seq || (b.seq === a.seq && b.pos > a.pos)).toBe(true);
    }
    // The all-vaults stream saw every vault's new rows.
    const allRows = new Set<string>();
    for (const m of gen.vaults())
      for (const r of await ledgerOf(m.vault)) if (!before.has(r.id)) allRows.add(r.id);
    await until(async () =>
      ledgerTypes(all.events).length >= allRows.size - expected.length ? true : undefined,
    );
    const allGot = ledgerTypes(all.events).map((e) => (JSON.parse(e.data) as LedgerRow).id);
    for (const id of expected.map((r) => r.id)) expect(allGot).toContain(id);
    expect(new Set(allGot).size).toBe(allGot.length);
  }, 60_000);

  it('a client that reconnects with Last-Event-ID receives exactly what it missed', async () => {
    const vaults = gen.vaults().map((m) => m.vault);
    const path = `/v1/stream?vault=${vaults[0]},${vaults[1]}&vault=${vaults[2]}`;
    const whole = await open(path); // never disconnected: the reference
    const part = await open(path);
    await Promise.all([whole.waitFor(3), part.waitFor(3)]); // the three opening snapshots
    await publish(brokers, topic, gen.take(30));
    await proj.caughtUp();
    const n = await until(async () => {
      const k = part.events.length;
      await sleep(300);
      return part.events.length === k && k > 3 ? k : undefined;
    });
    part.close();
    const lastId = part.events.at(-1)!.id!;
    // Missed while away.
    await publish(brokers, topic, gen.take(30));
    await proj.caughtUp();
    const back = await open(path, { 'Last-Event-ID': lastId });
    expect(back.status).toBe(200);
    const total = await until(async () => {
      const k = whole.events.length;
      await sleep(500);
      return whole.events.length === k ? k : undefined;
    });
    await back.waitFor(total - n);
    await sleep(300);
    const seen = [...part.events, ...back.events].map((e) => `${e.id} ${e.event} ${e.data.length}`);
    const ref = whole.events.map((e) => `${e.id} ${e.event} ${e.data.length}`);
    // Rows: exactly the reference's, no gap, no duplicate (snapshots may be newer, so compare ids).
    expect(seen.map((x) => x.split(' ').slice(0, 2).join(' '))).toEqual(
      ref.map((x) => x.split(' ').slice(0, 2).join(' ')),
    );
    expect(ledgerTypes(back.events).map((e) => e.data)).toEqual(
      ledgerTypes(whole.events.slice(n)).map((e) => e.data),
    );

    // Resuming in the middle of a commit: from an event with a position > 1, the rest of it.
    const mid = whole.events.findIndex((e) => (parseStreamCursor(e.id!)?.pos ?? 0) > 1);
    expect(mid).toBeGreaterThan(0);
    const again = await open(path, { 'Last-Event-ID': whole.events[mid]!.id! });
    await again.waitFor(whole.events.length - mid - 1);
    await sleep(300);
    expect(again.events.map((e) => e.id)).toEqual(whole.events.slice(mid + 1).map((e) => e.id));
  }, 90_000);

  it('refuses a Last-Event-ID it did not issue (400), an unknown vault (404), a bad vault list (400)', async () => {
    const vault = gen.vaults()[0]!.vault;
    const bad = await reader.get(`/v1/vault/${vault}/stream`, { 'Last-Event-ID': 'nope!' });
    expect(bad.status).toBe(400);
    expect(errorCode(bad)).toBe('invalid_request');
    const unknown = await reader.get(`/v1/vault/0x${'12'.repeat(20)}/stream`);
    expect(unknown.status).toBe(404);
    const list = await reader.get('/v1/stream?vault=0x12');
    expect(list.status).toBe(400);
    // A cursor ahead of the commits (another schema): a reset, then the stream goes on.
    const ahead = await open(`/v1/vault/${vault}/stream`, {
      'Last-Event-ID': encodeStreamCursor({ seq: 10n ** 12n, pos: 0 }),
    });
    const [reset, snap] = await ahead.waitFor(2);
    expect(reset?.event).toBe('reset');
    expect(snap?.event).toBe('snapshot');
  });

  it('holds 1,000 concurrent streams, each gets the next commit, and normal requests still answer 200', async () => {
    const vault = gen.vaults()[1]!.vault;
    const N = Number(process.env.STREAM_TEST_STREAMS ?? 1_000);
    const streams: RawStream[] = [];
    for (let i = 0; i < N; i += 100)
      streams.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(100, N - i) }, () => open(`/v1/vault/${vault}/stream`)),
        )),
      );
    expect(streams.every((s) => s.status === 200)).toBe(true);
    await Promise.all(streams.map((s) => s.waitFor(1, 30_000)));
    expect(reader.reader.hub.stats().streams).toBeGreaterThanOrEqual(N);
    const t0 = Date.now();
    const held = await Promise.all(
      Array.from({ length: 20 }, () => reader.get(`/v1/vault/${vault}/snapshot`)),
    );
    expect(held.map((r) => r.status)).toEqual(Array(20).fill(200));
    const slow = Date.now() - t0;
    const before = streams.map((s) => s.events.length);
    await publish(brokers, topic, gen.take(30));
    await proj.caughtUp();
    const at = Date.now();
    await Promise.all(streams.map((s, i) => s.waitFor(before[i]! + 1, 30_000)));
    console.log(
      `${N} streams held; 20 snapshot requests meanwhile in ${slow} ms; every stream had the commit ${Date.now() - at} ms after the projector caught up`,
    );
    for (const s of streams) s.close();
    await until(async () => (reader.reader.hub.stats().streams < 20 ? true : undefined), 10_000);
  }, 180_000);

  it('the caps answer 503 with Retry-After in the one error shape', async () => {
    const capped = await startReader(db, {
      streams: { maxTotal: 3, perClient: 2, heartbeatMs: 1_000, writeTimeoutMs: 30_000 },
    });
    try {
      const vault = gen.vaults()[0]!.vault;
      const a = await openStream(`${capped.url}/v1/vault/${vault}/stream`);
      const b = await openStream(`${capped.url}/v1/stream`);
      expect([a.status, b.status]).toEqual([200, 200]);
      const c = await capped.get(`/v1/vault/${vault}/stream`);
      expect(c.status).toBe(503);
      expect(c.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(errorCode(c)).toBe('unavailable');
      expect((c.body as { error: { message: string } }).error.message).toMatch(/this client/);
      // Normal requests are not streams: still served.
      expect((await capped.get(`/v1/vault/${vault}/snapshot`)).status).toBe(200);
      // The metrics say so, in one scrape: two open, one refused by the per-client cap.
      const scraped = await capped.reader.registry.metrics();
      expect(scraped).toMatch(/^reader_streams_open 2$/m);
      expect(scraped).toMatch(/^reader_streams_refused_total\{cap="client"\} 1$/m);
      expect(scraped).toMatch(/^reader_streams_refused_total\{cap="total"\} 0$/m);
      expect(scraped).toMatch(/^reader_streams_listening 1$/m);
      a.close();
      await until(async () => (capped.reader.hub.stats().streams === 1 ? true : undefined), 5_000);
      const d = await openStream(`${capped.url}/v1/stream`);
      expect(d.status).toBe(200);
      d.close();
      b.close();
    } finally {
      await capped.stop();
    }
    const total = await startReader(db, {
      streams: { maxTotal: 1, perClient: 5, heartbeatMs: 1_000, writeTimeoutMs: 30_000 },
    });
    try {
      const a = await openStream(`${total.url}/v1/stream`);
      expect(a.status).toBe(200);
      const c = await total.get('/v1/stream');
      expect(c.status).toBe(503);
      expect(c.headers.get('retry-after')).toMatch(/^\d+$/);
      expect((c.body as { error: { message: string } }).error.message).toMatch(/on this reader/);
      expect(await total.reader.registry.metrics()).toMatch(
        /^reader_streams_refused_total\{cap="total"\} 1$/m,
      );
      // A heartbeat comment on a quiet stream.
      await until(async () => (a.comments > 0 ? true : undefined), 5_000);
      a.close();
    } finally {
      await total.stop();
    }
  }, 60_000);

  it('the typed client subscribes and resumes with Last-Event-ID after a loss', async () => {
    const vault = gen.vaults()[2]!.vault;
    const rows: string[] = [];
    const states: string[] = [];
    const ac = new AbortController();
    const sub = reader.client.subscribe(
      vault,
      { ledger: (r) => rows.push(r.id), state: (s) => states.push(s) },
      { signal: ac.signal, retryMs: 100 },
    );
    await until(async () => (sub.state === 'live' ? true : undefined), 5_000);
    const before = new Set((await ledgerOf(vault)).map((r) => r.id));
    await publish(brokers, topic, gen.take(40));
    await proj.caughtUp();
    const expected = (await ledgerOf(vault)).filter((r) => !before.has(r.id)).map((r) => r.id);
    await until(async () => (rows.length >= expected.length ? true : undefined), 15_000);
    expect(rows).toEqual(expected);
    ac.abort();
    await sub.closed;
    expect(states.at(-1)).toBe('closed');
  }, 60_000);

  it('a reorg: the orphaned rows are retracted on the stream, before the canonical ones, and on resume too', async () => {
    const m = gen.vaults()[2] as VaultModel;
    const s = await open(`/v1/vault/${m.vault}/stream`);
    expect((await s.waitFor(1))[0]?.event).toBe('snapshot');
    const b = gen.block() + 10;
    const orphanHashes = [blockHash(b + 1, 1), blockHash(b + 2, 1)];
    const deposit = (amount: string, block: number, hash: `0x${string}`) =>
      gen.record(m, 'deposit', { from: m.owner, token: m.token1, amount }, { block, blockHash: hash });
    const orphaned = [
      deposit('5000000000', b + 1, orphanHashes[0]!),
      deposit('6000000000', b + 2, orphanHashes[1]!),
    ];
    await publish(brokers, topic, orphaned);
    await proj.caughtUp();
    const rowsOf = (events: typeof s.events) =>
      ledgerTypes(events).map((e) => JSON.parse(e.data) as LedgerRow);
    // The deposits (and any reconciliation the fold booked in those blocks) as the stream sent them.
    const inOrphans = () =>
      rowsOf(s.events).filter((r) => orphanHashes.includes(r.blockHash as `0x${string}`));
    await until(async () =>
      inOrphans().filter((r) => r.type === 'deposit').length === 2 ? true : undefined,
    );
    const ids = inOrphans().map((r) => r.id);

    const before = s.events.length;
    const revert = gen.record(
      m,
      'revert',
      { fromBlock: b + 1, orphanedBlockHashes: orphanHashes as [`0x${string}`], fromSeq: orphaned[0]!.seq! },
      { block: b + 2, blockHash: blockHash(b + 2) },
    );
    const canonical = deposit('7000000000', b + 1, blockHash(b + 1));
    await publish(brokers, topic, [revert, canonical]);
    await proj.caughtUp();
    await until(async () =>
      rowsOf(s.events.slice(before)).some((r) => r.blockHash === blockHash(b + 1)) ? true : undefined,
    );
    const after = s.events.slice(before);
    const retract = after.find((e) => e.event === 'retract');
    // Every row of the orphaned blocks the stream sent is retracted (ids ascending).
    const retracted = JSON.parse(retract!.data) as { vault: string; ids: string[] };
    expect(retracted.vault).toBe(m.vault);
    expect(retracted.ids).toEqual([...retracted.ids].sort());
    expect(retracted.ids).toEqual(expect.arrayContaining(ids));
    // Retracted before the canonical row and the snapshot that follow it.
    const kinds = after.map((e) => e.event);
    expect(kinds.indexOf('retract')).toBeLessThan(kinds.indexOf('ledger'));
    expect(kinds.at(-1)).toBe('snapshot');
    // Gone from GET events, as the event says.
    const served = ((await reader.get(`/v1/vault/${m.vault}/events?limit=500`)).body as LedgerRow[]).map(
      (r) => r.id,
    );
    for (const id of retracted.ids) expect(served).not.toContain(id);
    // A client that reconnects from before the reorg gets the same retraction, in the same place.
    const again = await open(`/v1/vault/${m.vault}/stream`, { 'Last-Event-ID': s.events[before - 1]!.id! });
    const replay = await again.waitFor(after.length);
    expect(replay.map((e) => [e.event, e.data])).toEqual(after.map((e) => [e.event, e.data]));
  }, 60_000);
});
