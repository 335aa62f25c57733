import { encodeStreamCursor, parseStreamCursor, SNAPSHOTS_PER_READ } from '@vault-yield/reader';
import { hexToBytes } from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  insertSnapshots,
  makeSnapshot,
  startReader,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream, until } from './support.js';

/**
 * A stream's reads are bounded by the bytes of their rows too (issue #42 item 4,
 * STREAM_PAGE_KIB): a commit of large rows is read in slices by the cursor's position, and the
 * stream sends the same events, in the same order, with the same ids, as with unbounded pages; a
 * stream resumed inside a split commit goes on from its row. Real reader and Postgres (commits
 * written as the projector writes them: ledger rows and their stream_commits row in one
 * transaction); loopback only.
 */

const KIB = 1024;
const VAULTS = [`0x${'c3'.repeat(20)}`, `0x${'d4'.repeat(20)}`, `0x${'e5'.repeat(20)}`];
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

describe('stream pages bounded by bytes (large rows)', () => {
  let db: TestDatabase;
  let w: Writer;
  let rows = 0;
  let block = 0;

  /** One projection commit: rows of `kib` KiB of payload each, over the vaults in turn. */
  const commit = async (n: number, kib: number) => {
    const client = await w.connect();
    try {
      await client.query('begin');
      const touched = new Set<string>();
      for (let i = 0; i < n; i++) {
        block += 1;
        const vault = VAULTS[block % VAULTS.length]!;
        touched.add(vault);
        await client.query(
          `insert into ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload)
           values (31337, ${hexToBytes('$1')}, ${hexToBytes('$2')}, 0, ${hexToBytes('$3')}, $4::int8, 0,
                   $4::int8 * 1000, 'suspended', jsonb_build_object('reason', repeat('x', $5::int * 1024)))`,
          [hash(block), hash(1_000_000 + block), vault, block, kib],
        );
      }
      // Commits name vault ids (migration 0028).
      await client.query('insert into stream_commits (vaults) values ($1::text[])', [
        [...touched].map((v) => `eip155:31337:${v}`).sort(),
      ]);
      await client.query('commit');
      rows += n;
    } finally {
      client.release();
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase('stream_bytes');
    w = writer(db.writerUrl, db.schema);
    // 4.5 MiB in all: small commits, commits of a few large rows, one of 40 rows of 64 KiB (2.5 MiB).
    // (A row larger than a page comes alone: packages/store's stream.int.test.ts.)
    for (let i = 0; i < 20; i++) await commit(3, 1);
    await commit(40, 64);
    for (let i = 0; i < 10; i++) await commit(4, 48);
    for (let i = 0; i < 20; i++) await commit(2, 2);
  }, 60_000);

  afterAll(async () => {
    await w?.end();
    await db?.drop();
  });

  /** The stream's events from `from` until `expected` ledger rows came, as `id event data`. */
  const replay = async (pageBytes: number, from: string, expected: number) => {
    const reader = await startReader(db, {
      streams: {
        maxTotal: 4,
        perClient: 4,
        heartbeatMs: 1_000,
        writeTimeoutMs: 30_000,
        pageRows: 1_000_000,
        pageBytes,
        cacheBytes: 1024 ** 3,
        // Paging is under test here, not the replay budget (replay-budget.test.ts).
        replayBytesPerSecond: 0,
      },
    });
    try {
      const s = await openStream(`${reader.url}/v1/stream`, { 'Last-Event-ID': from });
      try {
        const ledger = () => s.events.filter((e) => e.event === 'ledger').length;
        await until(async () => (ledger() >= expected ? true : undefined), 60_000, 20);
        return {
          largest: reader.reader.hub.stats().cache.largest,
          events: s.events.map((e) => `${e.id} ${e.event} ${e.data}`),
        };
      } finally {
        s.close();
      }
    } finally {
      await reader.stop();
    }
  };

  it('256 KiB pages: the same events as whole commits, no read in memory above the bound', async () => {
    const start = encodeStreamCursor({ seq: 0n, pos: 0 });
    const whole = await replay(1024 ** 3, start, rows);
    const paged = await replay(256 * KIB, start, rows);
    expect(whole.events).toHaveLength(rows);
    expect(paged.events).toEqual(whole.events);
    // The largest read held in memory (UTF-16: two bytes a character): a 2.5 MiB commit whole,
    // 256 KiB of JSON at most in slices.
    expect(whole.largest).toBeGreaterThan(2 * 40 * 64 * KIB);
    expect(paged.largest).toBeLessThanOrEqual(2 * 256 * KIB);

    // Resumed inside the split commit (its 10th row): the rest of it, then the rest.
    const mid = whole.events.findIndex((e) => parseStreamCursor(e.split(' ')[0]!)?.pos === 10);
    expect(mid).toBeGreaterThan(0);
    const rest = whole.events.slice(mid + 1);
    const resumed = await replay(256 * KIB, whole.events[mid]!.split(' ')[0]!, rest.length);
    expect(resumed.events).toEqual(rest);
  });
});

/**
 * A commit touching many vaults (marks: snapshots, no ledger rows) is bounded by its snapshots'
 * bytes too: a page stops before the commit that would take its snapshots past STREAM_PAGE_KIB,
 * and a first commit touching more comes alone, the rest of its snapshots read in slices of
 * SNAPSHOTS_PER_READ as the stream gets there — the same events, ids and order as unbounded.
 */
describe('stream pages bounded by their snapshots (a commit touching many vaults)', () => {
  let db: TestDatabase;
  let w: Writer;
  const vaults = Array.from({ length: 150 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);

  beforeAll(async () => {
    db = await createTestDatabase('stream_snaps');
    w = writer(db.writerUrl, db.schema);
    await insertSnapshots(
      w,
      vaults.map((vault) => makeSnapshot({ vault })),
    );
    // One commit touching every vault, then commits of 40 and 10 vaults.
    const commits = [vaults, vaults.slice(0, 40), vaults.slice(100, 140), vaults.slice(5, 15)];
    for (const touched of commits)
      await w.query('insert into stream_commits (vaults) values ($1::text[])', [
        [...touched].map((v) => `eip155:31337:${v}`).sort(),
      ]);
  }, 60_000);

  afterAll(async () => {
    await w?.end();
    await db?.drop();
  });

  const replay = async (pageBytes: number, from: string, expected: number) => {
    const reader = await startReader(db, {
      streams: {
        maxTotal: 4,
        perClient: 4,
        heartbeatMs: 1_000,
        writeTimeoutMs: 30_000,
        pageRows: 1_000_000,
        pageBytes,
        cacheBytes: 1024 ** 3,
        replayBytesPerSecond: 0,
      },
    });
    try {
      const s = await openStream(`${reader.url}/v1/stream`, { 'Last-Event-ID': from });
      try {
        await until(async () => (s.events.length >= expected ? true : undefined), 60_000, 20);
        return {
          largest: reader.reader.hub.stats().cache.largest,
          events: s.events.map((e) => `${e.id} ${e.event} ${e.data}`),
        };
      } finally {
        s.close();
      }
    } finally {
      await reader.stop();
    }
  };

  it('32 KiB pages: the same snapshot events as unbounded, no read above a slice of snapshots', async () => {
    const total = 150 + 40 + 40 + 10;
    const start = encodeStreamCursor({ seq: 0n, pos: 0 });
    const whole = await replay(1024 ** 3, start, total);
    const paged = await replay(32 * KIB, start, total);
    expect(whole.events).toHaveLength(total);
    expect(whole.events.every((e) => e.split(' ')[1] === 'snapshot')).toBe(true);
    expect(paged.events).toEqual(whole.events);
    // Unbounded: the first page held all 150 snapshots; bounded: a slice of them at most.
    const one = whole.largest / 150;
    expect(paged.largest).toBeLessThanOrEqual(SNAPSHOTS_PER_READ * one * 1.5);
    expect(paged.largest * 2).toBeLessThan(whole.largest);
    // Resumed inside the large commit (its 100th snapshot): the rest of it, then the rest.
    const mid = whole.events.findIndex((e) => parseStreamCursor(e.split(' ')[0]!)?.pos === 100);
    expect(mid).toBeGreaterThan(0);
    const rest = whole.events.slice(mid + 1);
    const resumed = await replay(32 * KIB, whole.events[mid]!.split(' ')[0]!, rest.length);
    expect(resumed.events).toEqual(rest);
  });
});
