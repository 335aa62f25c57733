import { vaultId } from '@vault-yield/domain';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytesToHex, createPgPool, hexToBytes, type Pool } from '../pool/index.js';
import { copyBinary } from './copy.js';
import {
  createProjectionStore,
  equityCopyBuffer,
  isUniqueViolation,
  type LedgerRow,
  type ProjectionStore,
  type SnapshotRow,
} from './index.js';

let db: TestDatabase;
let pool: Pool;
let store: ProjectionStore;

beforeAll(async () => {
  db = await createTestDatabase('projection_store');
  pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'projection-test', max: 4 });
  store = createProjectionStore(pool);
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

const h = (n: number, tag = 'b') => `0x${tag.repeat(1)}${n.toString(16).padStart(63, '0')}`;
const V1 = `0x${'1'.repeat(40)}`;
const V2 = `0x${'2'.repeat(40)}`;
/** The vault id of `vault` on chain 1 (these tests' rows' chain). */
const id = (vault: string) => vaultId(1, vault);

function row(vault: string, block: number, log: number, hashTag = 'b'): LedgerRow {
  return {
    vault,
    chainId: 1,
    blockHash: h(block, hashTag),
    txHash: h(block * 100 + log, 'c'),
    logIndex: log,
    blockNumber: block,
    txIndex: log,
    ts: block * 1000,
    type: 'mark',
    payload: JSON.stringify({ n: block * 10 + log }),
  };
}

/** A ledger row's record as the log holds it (its identity, block and payload). */
const recordOf = (r: LedgerRow) => ({
  chainId: r.chainId,
  blockHash: r.blockHash,
  txHash: r.txHash,
  logIndex: r.logIndex,
  vault: r.vault,
  blockNumber: r.blockNumber,
  txIndex: r.txIndex,
  payload: JSON.parse(r.payload) as unknown,
});

/** The rows' records as bundle bodies (one bundle per vault, in the rows' order). */
/** A body's record as JSON (these tests' bodies), up to a NUL that starts bytes no JSON holds. */
const json = (body: Buffer) => {
  const end = body.indexOf(0);
  return JSON.parse(body.subarray(0, end < 0 ? body.length : end).toString('utf8')) as ReturnType<
    typeof recordOf
  >;
};

type Body = ReturnType<typeof json> & { offLedger?: boolean };

/** The vault's records as a re-fold reads them (`offLedger`: these tests' flag). */
const vaultRecords = (
  tx: Parameters<Parameters<ProjectionStore['transaction']>[0]>[0],
  vault: string,
  decode: (b: Buffer) => Body | undefined = json,
) =>
  tx
    .vaultRecords<Body>(id(vault), { decode, offLedger: (r) => r.offLedger === true })
    .then((rs) => rs.map((s) => s.record));

function bodies(rows: readonly LedgerRow[]): Map<string, Uint8Array[]> {
  const out = new Map<string, Uint8Array[]>();
  for (const r of rows) {
    const k = vaultId(r.chainId, r.vault);
    out.set(k, [...(out.get(k) ?? []), Buffer.from(JSON.stringify(recordOf(r)))]);
  }
  return out;
}

describe('projection store', () => {
  it('locks a partition per transaction and serialises two owners on it', async () => {
    expect(await store.storedOffsets('g', 't', [0])).toEqual(new Map());
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let firstLocked: () => void = () => {};
    const locked = new Promise<void>((r) => {
      firstLocked = r;
    });
    const first = store.transaction(async (tx) => {
      expect(await tx.lockPartition('g', 't', 0)).toBeNull();
      firstLocked();
      await held;
      await tx.savePartition({ groupId: 'g', topic: 't', partition: 0, nextOffset: '42' });
    });
    await locked;
    // The second owner must block on the first one's row lock: seen from Postgres itself (a session
    // of this pool waiting on a transaction lock), not guessed from a sleep.
    let secondDone = false;
    const second = store.transaction((tx) => tx.lockPartition('g', 't', 0));
    void second.then(() => {
      secondDone = true;
    });
    try {
      for (;;) {
        const { rows } = await pool.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
        );
        if ((rows[0]?.n ?? 0) > 0) break;
        // Without the lock the second owner returns at once: fail then instead of waiting forever.
        expect(secondDone, 'the second owner did not wait for the lock').toBe(false);
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(secondDone).toBe(false);
    } finally {
      release();
    }
    await first;
    // Then it sees the first one's committed offset.
    expect(await second).toBe('42');
    expect(await store.storedOffsets('g', 't', [0, 1])).toEqual(new Map([[0, '42']]));
  });

  it('inserts ledger rows once and finds them by identity', async () => {
    const rows = [row(V1, 10, 0), row(V1, 10, 1), row(V2, 11, 0)];
    expect(await store.transaction((tx) => tx.insertLedger(rows))).toBe(3);
    expect(await store.transaction((tx) => tx.insertLedger([...rows, row(V1, 12, 0)]))).toBe(1);
    const found = await store.transaction((tx) =>
      tx.existingRecords([rows[0] as LedgerRow, row(V1, 99, 0), rows[2] as LedgerRow]),
    );
    expect(found.map((k) => `${k.vault}:${k.blockHash}:${k.logIndex}`).sort()).toEqual(
      [`${V1}:${h(10)}:0`, `${V2}:${h(11)}:0`].sort(),
    );
    const { rows: payloads } = await pool.query<{ payload: unknown }>(
      `select payload from ledger where vault = ${hexToBytes('$1')} order by block_number, log_index`,
      [V1],
    );
    expect(payloads.map((p) => p.payload)).toEqual([{ n: 100 }, { n: 101 }, { n: 120 }]);
  });

  it('COPYs ledger and equity rows exactly as the insert writes them, and refuses a duplicate', async () => {
    const V3 = `0x${'3'.repeat(40)}`;
    const V4 = `0x${'4'.repeat(40)}`;
    // Text that COPY must escape: backslashes, tabs, newlines (JSON keeps them escaped, but a
    // backslash escape is itself a backslash), and non-ASCII.
    const odd = (vault: string, block: number): LedgerRow => ({
      ...row(vault, block, 0),
      payload: JSON.stringify({ reason: 'a\\b\t"c"\n\r\u00e9 ✓ \\N' }),
    });
    await store.transaction((tx) => tx.insertLedger([odd(V3, 20), row(V3, 21, 0)]));
    await store.transaction((tx) => tx.copyLedger([odd(V4, 20), row(V4, 21, 0)]));
    const text = async (vault: string) =>
      (
        await pool.query<{ t: string }>(
          `select string_agg(concat_ws('|', chain_id, block_hash, tx_hash, log_index, block_number, tx_index, ts, type,
                  payload::text), E'\n' order by block_number) as t from ledger where vault = ${hexToBytes('$1')}`,
          [vault],
        )
      ).rows[0]?.t.replaceAll(vault, 'V');
    expect(await text(V4)).toBe(await text(V3));
    expect(await text(V4)).toContain('a\\\\b\\t');
    // json columns keep the text exactly as written (the reader serves it as stored).
    expect(await text(V3)).toContain(`|mark|${odd(V3, 20).payload}\n`);

    await expect(
      store.transaction((tx) => tx.copyLedger([row(V4, 22, 0), row(V4, 21, 0)])),
    ).rejects.toSatisfy(isUniqueViolation);
    // The failed COPY rolled back whole.
    const [n] = (
      await pool.query<{ n: number }>(
        `select count(*)::int as n from ledger where vault = ${hexToBytes('$1')}`,
        [V4],
      )
    ).rows;
    expect(n?.n).toBe(2);

    const point = (vault: string, seq: number) => ({
      chainId: 1,
      vault,
      ts: 1000 + seq,
      blockNumber: 10 + seq,
      seq,
      valueUsd: '1234567.123456',
      capitalInUsd: '-0.000001',
      capitalOutUsd: '0',
      strategy: 'wide',
      returnIndex: '1.000000000000000001',
      // A state folded before fold version 5 has none (null, as COPY's \N).
      holdValueUsd: seq === 1 ? '1200000.5' : null,
    });
    // Rows given as objects, or encoded as they come (a CopyBuffer): the same stored rows.
    const V5 = `0x${'5'.repeat(40)}`;
    await store.transaction(async (tx) => {
      await tx.insertEquity([point(V4, 1), point(V4, 2)]);
      const buffer = equityCopyBuffer();
      for (const seq of [1, 2]) buffer.add(point(V5, seq));
      await tx.insertEquity(buffer);
      await tx.insertEquity(equityCopyBuffer());
    });
    const stored = async (vault: string) =>
      (
        await pool.query(
          `select ts, block_number, seq, value_usd::text, capital_in_usd::text, capital_out_usd::text, strategy, return_index::text,
                  hold_usd::text
           from equity_points where vault = ${hexToBytes('$1')} order by seq`,
          [vault],
        )
      ).rows;
    expect(await stored(V5)).toEqual(await stored(V4));
    await pool.query(`delete from equity_points where vault = ${hexToBytes('$1')}`, [V5]);
    const { rows: eq } = await pool.query(
      `select ${bytesToHex('vault')} as vault, ts, block_number, seq, value_usd::text, capital_in_usd::text,
              capital_out_usd::text, hold_usd::text
       from equity_points where vault = ${hexToBytes('$1')} order by seq`,
      [V4],
    );
    expect(eq).toEqual(
      [1, 2].map((seq) => ({
        vault: V4,
        ts: 1000 + seq,
        block_number: 10 + seq,
        seq,
        value_usd: '1234567.123456',
        capital_in_usd: '-0.000001',
        capital_out_usd: '0',
        hold_usd: seq === 1 ? '1200000.5' : null,
      })),
    );
    await pool.query(`delete from ledger where ${bytesToHex('vault')} = any($1::text[])`, [[V3, V4]]);
    await pool.query(`delete from equity_points where vault = ${hexToBytes('$1')}`, [V4]);
  });

  it('deletes only the orphaned rows and reads the rest back in fold order', async () => {
    const early = [row(V1, 10, 0), row(V1, 10, 1), row(V1, 12, 0)];
    const late = [row(V1, 13, 0, 'e'), row(V1, 14, 0, 'e'), row(V2, 13, 0, 'e')];
    // Bodies in two bundles, the later one first in fold order (bundles are matched by identity).
    await store.transaction(async (tx) => {
      await tx.insertLedger(late);
      await tx.copyBundles(bodies([late[1]!, late[0]!, late[2]!]));
      await tx.copyBundles(bodies(early));
    });
    const removed = await store.transaction((tx) =>
      tx.deleteOrphaned(id(V1), 13, [h(13, 'e'), h(14, 'e'), h(10)]),
    );
    expect(removed).toBe(2);
    const records = await store.transaction((tx) => vaultRecords(tx, V1));
    expect(records).toEqual(early.map(recordOf));
    const [v2] = (
      await pool.query<{ n: number }>(
        `select count(*)::int as n from ledger where vault = ${hexToBytes('$1')}`,
        [V2],
      )
    ).rows;
    expect(v2?.n).toBe(2);
  });

  it("keeps record bodies byte for byte in bundles and reads each ledger row's body back", async () => {
    const V7 = `0x${'7'.repeat(40)}`;
    const rows = [row(V7, 30, 0), row(V7, 31, 0), row(V7, 32, 0)];
    // Bytes COPY must escape (backslash, tab, carriage return), non-ASCII, bytes that are not
    // valid UTF-8, line feeds and NULs (binary records hold any byte): all kept byte for byte.
    const escaped = Buffer.from(
      JSON.stringify({ ...recordOf(rows[0]!), note: 'a\\b\t"c"\r é ✓ \\N' }).replace('"note"', '\t\r"note"'),
    );
    const text = JSON.stringify({ ...recordOf(rows[1]!), note: 'XX' });
    const at = text.indexOf('XX');
    const bad = Buffer.concat([
      Buffer.from(text.slice(0, at)),
      Buffer.from([0xff]),
      Buffer.from(text.slice(at + 2)),
    ]);
    const first = Buffer.concat([
      Buffer.from(JSON.stringify({ ...recordOf(rows[2]!), v: 1 }, null, 1)),
      Buffer.from([0, 0x0a, 0x5c, 0x09, 0x0d, 0xb1, 0xff, 0]),
    ]);
    const republished = Buffer.from(JSON.stringify({ ...recordOf(rows[2]!), v: 2 }));
    await store.transaction(async (tx) => {
      await tx.copyLedger(rows);
      await tx.copyBundles(new Map([[id(V7), [escaped, bad, first]]]));
      await tx.copyBundles(new Map([[id(V7), [republished]]]));
    });
    const seen: Buffer[] = [];
    const keep = (b: Buffer) => {
      seen.push(Buffer.from(b));
      return json(b);
    };
    const back = await store.transaction((tx) => vaultRecords(tx, V7, keep));
    expect(seen).toEqual([escaped, bad, first, republished]);
    expect(back[0]).toEqual(JSON.parse(escaped.toString('utf8')));
    // A republished record's latest body wins.
    expect((back[2] as unknown as { v: number }).v).toBe(2);
    // A body its decoder refuses (undefined) is no body: the earlier one of that record counts.
    const notV2 = (b: Buffer) => ((json(b) as { v?: number }).v === 2 ? undefined : json(b));
    const older = await store.transaction((tx) => vaultRecords(tx, V7, notV2));
    expect((older[2] as unknown as { v: number }).v).toBe(1);

    // A ledger row without a body is a loud error, never a re-fold that silently skips a record.
    await store.transaction((tx) => tx.copyLedger([row(V7, 33, 0)]));
    await expect(store.transaction((tx) => vaultRecords(tx, V7))).rejects.toThrow(/has no record body/);
    await store.transaction(async (tx) => {
      await tx.deleteOrphaned(id(V7), 30, [h(30), h(31), h(32), h(33)]);
      expect(await vaultRecords(tx, V7)).toEqual([]);
      await tx.rewriteBundles(id(V7), []);
    });
    const [left] = (
      await pool.query<{ n: number }>('select count(*)::int as n from record_bundles where vault = $1', [V7])
    ).rows;
    expect(left?.n).toBe(0);
  });

  it('reads records without ledger rows from the bundles that are their authority, in fold order', async () => {
    const V8 = `0x${'8'.repeat(40)}`;
    const ledgered = [row(V8, 40, 0), row(V8, 42, 0)];
    const off = (block: number): Body => ({ ...recordOf(row(V8, block, -1)), offLedger: true });
    const buf = (r: object) => Buffer.from(JSON.stringify(r));
    await store.transaction(async (tx) => {
      await tx.copyLedger(ledgered);
      await tx.copyBundles(
        new Map([[id(V8), [buf(off(43)), ...ledgered.map((r) => buf(recordOf(r))), buf(off(41))]]]),
      );
    });
    // A bundle written before 0013 is not the authority on its marks: one whose ledger row a
    // revert deleted (block 39) must not count again.
    const legacy = buf(off(39));
    const length = Buffer.alloc(4);
    length.writeUInt32BE(legacy.length);
    await pool.query(
      'insert into record_bundles (chain_id, vault, frames, marks_off_ledger) values (1, $1, $2, false)',
      [V8, Buffer.concat([length, legacy])],
    );
    const blocks = async () =>
      (await store.transaction((tx) => vaultRecords(tx, V8))).map((r) => r.blockNumber);
    expect(await blocks()).toEqual([40, 41, 42, 43]);
    // Written again as one bundle (what survives a revert): the authority from then on.
    await store.transaction(async (tx) => {
      const kept = (
        await tx.vaultRecords<Body>(id(V8), { decode: json, offLedger: (r) => r.offLedger === true })
      )
        .filter((s) => s.record.blockNumber !== 43)
        .map((s) => s.body);
      await tx.rewriteBundles(id(V8), kept);
    });
    expect(await blocks()).toEqual([40, 41, 42]);
    const { rows: bundles } = await pool.query<{ n: number; flagged: boolean }>(
      'select count(*)::int as n, bool_and(marks_off_ledger) as flagged from record_bundles where vault = $1',
      [V8],
    );
    expect(bundles).toEqual([{ n: 1, flagged: true }]);
  });

  it('binary COPY carries int4 fields exactly', async () => {
    const client = await pool.connect();
    try {
      await client.query('create temp table ints (n serial, i int4, t text)');
      const values = [0, 1, 31337, -1, 2 ** 31 - 1, -(2 ** 31)];
      await copyBinary(
        client,
        'copy ints (i, t) from stdin (format binary)',
        values.map((i) => [i, String(i)]),
      );
      const { rows: back } = await client.query<{ i: number; t: string }>('select i, t from ints order by n');
      expect(back).toEqual(values.map((i) => ({ i, t: String(i) })));
    } finally {
      client.release();
    }
  });

  it('binary COPY carries text, bytes given in pieces and booleans exactly', async () => {
    const bytes = (n: number, seed: number) =>
      Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) % 256));
    const rows = [
      ['plain', [bytes(3, 1), bytes(0, 0), bytes(70_000, 2)], true],
      ['é ✓ \t\\N', [], false],
      ['', [bytes(1, 0)], true],
    ] as const;
    const client = await pool.connect();
    try {
      await client.query('create temp table copied (n serial, t text, b bytea, f boolean)');
      await copyBinary(client, 'copy copied (t, b, f) from stdin (format binary)', rows);
      const { rows: back } = await client.query<{ t: string; b: Buffer; f: boolean }>(
        'select t, b, f from copied order by n',
      );
      expect(back).toEqual(rows.map(([t, b, f]) => ({ t, b: Buffer.concat([...b]), f })));
    } finally {
      client.release();
    }
  });

  it('upserts snapshots, replaces positions and reads states back', async () => {
    const snap = (records: number): SnapshotRow => ({
      lastSeq: null,
      held: false,
      vault: V1,
      chainId: 1,
      owner: V2,
      strategy: 's',
      status: 'idle',
      snapshot: JSON.stringify({ records }),
      state: JSON.stringify({ v: 1, records, big: '123456789012345678901234567890' }),
      lastRecordId: `id-${records}`,
      recordsApplied: records,
      createdAt: 1000,
      updatedAt: 1000 + records,
      head: { blockNumber: 10 + records, txIndex: 2, logIndex: 3 },
    });
    const position = (pid: string) => ({
      chainId: 1,
      vault: V1,
      positionId: pid,
      pool: V2,
      tickLower: -60,
      tickUpper: 60,
      liquidity: '340282366920938463463374607431768211455',
      inRange: true,
      view: JSON.stringify({ id: pid }),
    });
    await store.transaction(async (tx) => {
      await tx.upsertSnapshots([snap(1)]);
      await tx.replacePositions([id(V1)], [position('1'), position('2')]);
    });
    await store.transaction(async (tx) => {
      await tx.upsertSnapshots([snap(2)]);
      await tx.replacePositions([id(V1)], [position('3')]);
    });
    const loaded = await store.transaction((tx) => tx.loadVaults([id(V1), id(V2), vaultId(2, V1)]));
    expect([...loaded.keys()]).toEqual([id(V1)]);
    expect(loaded.get(id(V1))).toEqual({
      chainId: 1,
      vault: V1,
      state: { v: 1, records: 2, big: '123456789012345678901234567890' },
      recordsApplied: 2,
      createdAt: 1000,
      lastRecordId: 'id-2',
      head: { blockNumber: 12, txIndex: 2, logIndex: 3 },
      lastSeq: null,
      held: false,
    });
    const { rows } = await pool.query<{ position_id: string; liquidity: string }>(
      'select position_id, liquidity from positions',
    );
    expect(rows).toEqual([{ position_id: '3', liquidity: '340282366920938463463374607431768211455' }]);
  });

  it('writes equity points and dead letters (the latter idempotently, raw bytes intact)', async () => {
    await store.transaction(async (tx) => {
      await tx.insertEquity([
        {
          chainId: 1,
          vault: V1,
          ts: 1,
          blockNumber: 1,
          seq: 1,
          valueUsd: '0.000001',
          capitalInUsd: '10',
          capitalOutUsd: '0',
          strategy: 'wide',
          returnIndex: '1',
          holdValueUsd: null,
        },
      ]);
      const letter = {
        topic: 't',
        partition: 1,
        offset: '7',
        key: Buffer.from('k'),
        value: Buffer.from([0, 255, 34]),
        reason: 'r',
        vault: null,
        kind: 'decode' as const,
      };
      await tx.insertDeadLetters([letter]);
      await tx.insertDeadLetters([letter]);
    });
    const { rows } = await pool.query<{ value: Buffer; offset: number }>(
      'select value, "offset" from dead_letters',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.value.equals(Buffer.from([0, 255, 34]))).toBe(true);
    const { rows: eq } = await pool.query<{ value_usd: string }>('select value_usd::text from equity_points');
    expect(eq).toEqual([{ value_usd: '0.000001' }]);
  });

  it('keeps the same address on two chains apart in every keyed write, read and delete', async () => {
    const VX = `0x${'a'.repeat(40)}`;
    const [A, B] = [vaultId(1, VX), vaultId(2, VX)];
    const on = (chainId: number, r: LedgerRow): LedgerRow => ({ ...r, chainId });
    const ledger = [
      on(1, row(VX, 60, 0)),
      on(1, row(VX, 61, 0)),
      on(2, row(VX, 60, 0)),
      on(2, row(VX, 62, 0)),
    ];
    const snapOf = (chainId: number, records: number): SnapshotRow => ({
      lastSeq: records,
      held: chainId === 2,
      vault: VX,
      chainId,
      owner: V2,
      strategy: 's',
      status: 'idle',
      snapshot: JSON.stringify({ id: vaultId(chainId, VX), chainId, vault: VX, records, behind: null }),
      state: JSON.stringify({ chainId, records }),
      lastRecordId: `id-${chainId}`,
      recordsApplied: records,
      createdAt: 1000,
      updatedAt: 60_000 + chainId,
      head: { blockNumber: 60 + chainId, txIndex: 0, logIndex: 0 },
    });
    const positionOf = (chainId: number, pid: string) => ({
      chainId,
      vault: VX,
      positionId: pid,
      pool: V2,
      tickLower: -60,
      tickUpper: 60,
      liquidity: '1',
      inRange: true,
      view: JSON.stringify({ id: pid }),
    });
    const pointOf = (chainId: number, seq: number) => ({
      chainId,
      vault: VX,
      ts: 60_000 + seq,
      blockNumber: 60 + seq,
      seq,
      valueUsd: String(chainId * 100),
      capitalInUsd: '0',
      capitalOutUsd: '0',
      strategy: 's',
      returnIndex: '1',
      holdValueUsd: '0',
    });
    const gap = (chainId: number, offset: string) => ({
      topic: 'two',
      partition: 0,
      offset,
      key: Buffer.from(VX),
      value: Buffer.from('{}'),
      reason: 'gap',
      vault: VX,
      chainId,
      kind: 'gap' as const,
      seq: 9,
      blockNumber: 70,
    });
    await store.transaction(async (tx) => {
      await tx.insertLedger(ledger);
      await tx.copyBundles(bodies(ledger));
      await tx.upsertSnapshots([snapOf(1, 2), snapOf(2, 2)]);
      // The same position id on both chains: two rows.
      await tx.replacePositions([A, B], [positionOf(1, '7'), positionOf(2, '7'), positionOf(2, '8')]);
      await tx.insertEquity([pointOf(1, 1), pointOf(1, 2), pointOf(2, 1)]);
      await tx.insertDeadLetters([gap(2, '1')]);
      await tx.markBehind([A, B]);
      await tx.savePartition({ groupId: 'two', topic: 'two', partition: 3, nextOffset: '2' });
      expect(await tx.noteCommit([B, A, B])).not.toBeNull();
    });
    const count = async (table: string, chainId: number) =>
      (
        await pool.query<{ n: number }>(
          `select count(*)::int as n from ${table} where chain_id = $1 and vault = ${
            table === 'equity_points' || table === 'ledger' ? hexToBytes('$2') : '$2'
          }`,
          [chainId, VX],
        )
      ).rows[0]?.n;
    expect([await count('positions', 1), await count('positions', 2)]).toEqual([1, 2]);
    expect([await count('equity_points', 1), await count('equity_points', 2)]).toEqual([2, 1]);
    expect([await count('record_bundles', 1), await count('record_bundles', 2)]).toEqual([1, 1]);
    const loaded = await store.transaction((tx) => tx.loadVaults([A, B]));
    expect([...loaded.keys()].sort()).toEqual([A, B]);
    expect(loaded.get(A)?.state).toEqual({ chainId: 1, records: 2 });
    expect(loaded.get(B)).toMatchObject({ chainId: 2, vault: VX, held: true, lastRecordId: 'id-2' });
    // Held letters and `behind` are the chain's own.
    expect((await store.transaction((tx) => tx.lockHeld([A]))).length).toBe(0);
    expect(
      (await store.transaction((tx) => tx.lockHeld([B]))).map((l) => [l.chainId, l.vault, l.seq]),
    ).toEqual([[2, VX, 9]]);
    const { rows: behind } = await pool.query<{ chain_id: number; behind: unknown; log_partition: number }>(
      `select chain_id, snapshot->'behind' as behind, log_partition from vault_snapshot where vault = $1 order by chain_id`,
      [VX],
    );
    expect(behind.map((r) => [r.chain_id, r.behind === null, r.log_partition])).toEqual([
      [1, true, 3],
      [2, false, 3],
    ]);
    const { rows: commits } = await pool.query<{ vaults: string[] }>(
      'select vaults from stream_commits order by seq desc limit 1',
    );
    expect(commits[0]?.vaults).toEqual([A, B]);
    // Records read back per chain; a revert on chain 2 leaves chain 1's rows alone.
    expect(
      (await store.transaction((tx) => tx.vaultRecords(A, { decode: json, offLedger: () => false }))).map(
        (r) => [r.record.chainId, r.record.blockNumber],
      ),
    ).toEqual([
      [1, 60],
      [1, 61],
    ]);
    await store.transaction(async (tx) => {
      expect(await tx.deleteOrphaned(B, 60, [h(60), h(61), h(62)])).toBe(2);
      await tx.rewriteBundles(B, []);
      await tx.clearVault(B, { snapshot: true });
      await tx.deleteReconciled(B);
    });
    expect([await count('ledger', 1), await count('ledger', 2)]).toEqual([2, 0]);
    expect([await count('positions', 1), await count('positions', 2)]).toEqual([1, 0]);
    expect([await count('equity_points', 1), await count('equity_points', 2)]).toEqual([2, 0]);
    expect([await count('record_bundles', 1), await count('record_bundles', 2)]).toEqual([1, 0]);
    expect([await count('vault_snapshot', 1), await count('vault_snapshot', 2)]).toEqual([1, 0]);
    // A letter of no known chain (its record did not decode; its key names the address) leaves
    // the vaults at its address on every chain behind: either may miss it.
    await store.transaction(async (tx) => {
      await tx.upsertSnapshots([snapOf(2, 2)]);
      await tx.insertDeadLetters([{ ...gap(2, '2'), chainId: null, kind: 'decode', seq: null }]);
      await tx.markBehind([], [VX]);
    });
    const { rows: flagged } = await pool.query<{ chain_id: number; n: number }>(
      `select chain_id, (snapshot->'behind'->>'deadLetters')::int as n from vault_snapshot where vault = $1 order by chain_id`,
      [VX],
    );
    expect(flagged).toEqual([
      { chain_id: 1, n: 1 },
      { chain_id: 2, n: 2 },
    ]);
    // The address alone is no vault id: a store call given one throws rather than match every chain.
    await expect(store.transaction((tx) => tx.loadVaults([VX]))).rejects.toThrow(/not a vault id/);
  });

  it('rolls a failed transaction back whole', async () => {
    await expect(
      store.transaction(async (tx) => {
        await tx.insertLedger([row(V2, 50, 0)]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const [r] = (
      await pool.query<{ n: number }>('select count(*)::int as n from ledger where block_number = 50')
    ).rows;
    expect(r?.n).toBe(0);
  });
});
