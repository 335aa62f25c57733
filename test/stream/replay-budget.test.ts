import { encodeStreamCursor } from '@vault-yield/reader';
import { hexToBytes } from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { startReader, type TestReader, type Writer, writer } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream, type RawStream, until } from './support.js';

/**
 * The replay budget (issue #42, STREAM_REPLAY_KIB_S): streams catching up behind the head read
 * together at most so many bytes of JSON a second, each waiting its turn between pages with a
 * keep-alive, while a stream at the head gets a new commit at once; a replay held back loses
 * nothing (the same events as unbounded). Real reader and Postgres (commits written as the
 * projector writes them); loopback only.
 */

const KIB = 1024;
const VAULT = `0x${'a7'.repeat(20)}`;
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
/** 24 commits of 4 rows of 16 KiB: 1.5 MiB behind the head, a page (64 KiB) a commit. */
const COMMITS = 24;
const ROWS = 4;
const ROW_KIB = 16;
const RATE = 256 * KIB;
const PAGE = 64 * KIB;

describe('replay budget: streams behind the head share a byte rate, streams at the head never wait', () => {
  let db: TestDatabase;
  let w: Writer;
  let block = 0;

  const commit = async (n: number, kib: number) => {
    const client = await w.connect();
    try {
      await client.query('begin');
      for (let i = 0; i < n; i++) {
        block += 1;
        await client.query(
          `insert into ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload)
           values (31337, ${hexToBytes('$1')}, ${hexToBytes('$2')}, 0, ${hexToBytes('$3')}, $4::int8, 0,
                   $4::int8 * 1000, 'suspended', jsonb_build_object('reason', repeat('x', $5::int * 1024)))`,
          [hash(block), hash(1_000_000 + block), VAULT, block, kib],
        );
      }
      // Commits name vault ids (migration 0028).
      await client.query('insert into stream_commits (vaults) values ($1::text[])', [
        [`eip155:31337:${VAULT}`],
      ]);
      await client.query('commit');
    } finally {
      client.release();
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase('stream_replay');
    w = writer(db.writerUrl, db.schema);
    for (let i = 0; i < COMMITS; i++) await commit(ROWS, ROW_KIB);
  }, 60_000);

  afterAll(async () => {
    await w?.end();
    await db?.drop();
  });

  const reader = (replayBytesPerSecond: number) =>
    startReader(db, {
      streams: {
        maxTotal: 8,
        perClient: 8,
        heartbeatMs: 1_000,
        writeTimeoutMs: 30_000,
        pageRows: 1_000_000,
        pageBytes: PAGE,
        cacheBytes: 1024 ** 3,
        replayBytesPerSecond,
      },
    });
  const ledger = (s: RawStream) => s.events.filter((e) => e.event === 'ledger');
  const stats = (r: TestReader) => r.reader.hub.stats().replay;
  const oldest = encodeStreamCursor({ seq: 0n, pos: 0 });
  const rows = COMMITS * ROWS;

  it('a replay from the oldest id is held to the rate, a live stream is not; the replay loses nothing', async () => {
    // The reference: unbounded.
    const free = await reader(0);
    let reference: string[];
    try {
      const s = await openStream(`${free.url}/v1/stream`, { 'Last-Event-ID': oldest });
      await until(async () => (ledger(s).length >= rows ? true : undefined), 30_000, 20);
      s.close();
      reference = s.events.map((e) => `${e.id} ${e.event} ${e.data}`);
      expect(stats(free).waiting).toBe(0);
      expect(stats(free).waitedMs).toBe(0);
    } finally {
      await free.stop();
    }

    const r = await reader(RATE);
    try {
      const opened = performance.now();
      const replay = await openStream(`${r.url}/v1/stream`, { 'Last-Event-ID': oldest });
      // Past its burst (a second's worth: 256 KiB, 4 pages) the replay waits its turn.
      await until(async () => (stats(r).waiting === 1 ? true : undefined), 15_000, 10);
      const before = ledger(replay).length;
      expect(before).toBeGreaterThan(0);
      expect(before).toBeLessThan(rows);
      // A stream at the head gets a new commit while the replay waits (1.5 MiB at 256 KiB/s: ≥ 4 s).
      const live = await openStream(`${r.url}/v1/stream`);
      await commit(1, 1);
      await until(async () => (ledger(live).length === 1 ? true : undefined), 15_000, 10);
      expect(ledger(replay).length).toBeLessThan(rows);
      // The replay goes on to the end, nothing lost nor repeated.
      await until(async () => (ledger(replay).length >= rows + 1 ? true : undefined), 60_000, 20);
      const took = performance.now() - opened;
      expect(replay.events.slice(0, reference.length).map((e) => `${e.id} ${e.event} ${e.data}`)).toEqual(
        reference,
      );
      // Charged: the pages read behind the head (1.5 MiB of rows, at least). Held: what was read
      // after the first page, less the burst, took at least its time at the rate (a lower bound
      // whatever the machine's load: a slow machine only reads slower).
      const { bytes } = stats(r);
      expect(bytes).toBeGreaterThanOrEqual(rows * ROW_KIB * KIB - PAGE);
      expect(took).toBeGreaterThanOrEqual(((bytes - 2 * PAGE - RATE) / RATE) * 1_000);
      // The live stream was never charged nor held: its one row, at once.
      expect(ledger(live)).toHaveLength(1);
      replay.close();
      live.close();
      await until(async () => (stats(r).waiting === 0 ? true : undefined), 10_000, 10);
    } finally {
      await r.stop();
    }
  }, 120_000);

  it('a commit too large for a page is read in slices, each taking its turn: a replay never reads a large commit whole for free', async () => {
    // One commit of 40 rows of 16 KiB (640 KiB) above the history, read in 64 KiB slices, and a
    // commit after it (the large one is behind the head); a second replay opened meanwhile waits
    // its turn too.
    await commit(40, ROW_KIB);
    await commit(1, 1);
    const r = await reader(RATE);
    try {
      // From before the large commit: its 40 rows, then the last commit's one.
      const { head } = await r.reader.hub.refresh();
      const from = encodeStreamCursor({ seq: head - 2n, pos: 0 });
      const first = await openStream(`${r.url}/v1/stream`, { 'Last-Event-ID': from });
      await until(async () => (stats(r).waiting === 1 ? true : undefined), 15_000, 10);
      expect(ledger(first).length).toBeLessThan(40);
      const second = await openStream(`${r.url}/v1/stream`, { 'Last-Event-ID': from });
      await until(async () => (stats(r).waiting === 2 ? true : undefined), 15_000, 10);
      // Both get the whole commit in the end, the same rows.
      await until(
        async () => (ledger(first).length >= 41 && ledger(second).length >= 41 ? true : undefined),
        60_000,
        20,
      );
      const idsOf = (s: RawStream) => s.events.map((e) => `${e.id} ${e.event}`);
      expect(idsOf(second)).toEqual(idsOf(first));
      first.close();
      second.close();
    } finally {
      await r.stop();
    }
  }, 90_000);

  it('a wait longer than a heartbeat sends keep-alives (a proxy never cuts a replay held back)', async () => {
    // 16 KiB/s: after its first page (the burst), each 64 KiB page holds the replay 4 s.
    const r = await reader(16 * KIB);
    try {
      const replay = await openStream(`${r.url}/v1/stream`, { 'Last-Event-ID': oldest });
      // Its first page is its burst; its second is charged 4 s: the keep-alives come (one a
      // second) before its third page.
      await until(async () => (replay.comments > 0 ? true : undefined), 15_000, 10);
      expect(stats(r).waiting).toBe(1);
      expect(ledger(replay).length).toBeLessThanOrEqual(2 * ROWS);
      replay.close();
      // A stream that leaves while it waits frees its turn at once.
      await until(
        async () => (stats(r).waiting === 0 && r.reader.hub.stats().streams === 0 ? true : undefined),
        10_000,
        10,
      );
    } finally {
      await r.stop();
    }
  }, 60_000);
});
