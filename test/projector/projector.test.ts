import type { VaultRecord } from '@vault-yield/domain';
import { bytesToHex, hexToBytes } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { blockHash, createHistoryGenerator, type VaultModel } from '@vault-yield/test-kit/history';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Checksums,
  checksums,
  createTopic,
  deleteTopics,
  projector,
  publish,
  query,
  VAULT_TABLES,
} from './support.js';

const brokers = () => kafkaBrokers();
const dbs: TestDatabase[] = [];
afterAll(async () => {
  for (const db of dbs) await db.drop();
  await deleteTopics();
});

async function database(label: string): Promise<TestDatabase> {
  const db = await createTestDatabase(label);
  dbs.push(db);
  return db;
}

/** Projects `topic` into a fresh database with one in-process projector; returns the database. */
async function project(topic: string, label: string): Promise<TestDatabase> {
  const db = await database(label);
  const p = projector({ brokers: brokers(), url: db.writerUrl, schema: db.schema, topic, group: label });
  await p.start();
  await p.caughtUp();
  await p.stop();
  return db;
}

describe('projector: duplicates and instances', () => {
  const records = createHistoryGenerator({ vaults: 120, seed: 11 }).take(12_000);
  let topic: string;
  let baseline: Checksums;

  beforeAll(async () => {
    topic = uniqueTopic('proj-base');
    await createTopic(brokers(), topic);
    await publish(brokers(), topic, records);
    const db = await project(topic, 'base');
    baseline = await checksums(db.writerUrl, db.schema);
    // Sequenced marks have no ledger rows (migration 0013).
    expect(baseline.ledger?.rows).toBe(records.filter((r) => r.type !== 'mark').length);
  }, 120_000);

  it('gives the same tables when every record is published twice', async () => {
    const twice = uniqueTopic('proj-twice');
    await createTopic(brokers(), twice);
    await publish(brokers(), twice, records);
    await publish(brokers(), twice, records);
    const db = await database('twice');
    const p = projector({
      brokers: brokers(),
      url: db.writerUrl,
      schema: db.schema,
      topic: twice,
      group: 'twice',
    });
    await p.start();
    await p.caughtUp();
    const duplicates = (await p.metrics.duplicates.get()).values[0]?.value;
    await p.stop();
    expect(await checksums(db.writerUrl, db.schema, VAULT_TABLES)).toEqual(
      Object.fromEntries(VAULT_TABLES.map((t) => [t, baseline[t]])),
    );
    expect(duplicates).toBe(records.length);
  });

  it('gives the same tables from a log written in JSON, then binary (an upgraded indexer), republished records in the other encoding', async () => {
    const mixed = uniqueTopic('proj-mixed');
    await createTopic(brokers(), mixed);
    const half = records.length / 2;
    await publish(brokers(), mixed, records.slice(0, half), [], 'json');
    // Records already in the log come again in the new encoding (a republish after the upgrade):
    // duplicates by identity, whatever their bytes.
    await publish(brokers(), mixed, records.slice(half - 500), [], 'binary');
    const db = await project(mixed, 'mixed');
    expect(await checksums(db.writerUrl, db.schema, VAULT_TABLES)).toEqual(
      Object.fromEntries(VAULT_TABLES.map((t) => [t, baseline[t]])),
    );
  });

  it('gives the same tables when two instances share the partitions and one stops mid-stream', async () => {
    // The log arrives in three parts, each gated on what the instances have done, so the case is
    // the same on any machine: a fast instance cannot fold everything before the other joins.
    const pair = uniqueTopic('proj-pair');
    await createTopic(brokers(), pair);
    const third = Math.floor(records.length / 3);
    await publish(brokers(), pair, records.slice(0, third));
    const db = await database('pair');
    const mk = () =>
      projector({
        brokers: brokers(),
        url: db.writerUrl,
        schema: db.schema,
        topic: pair,
        group: 'pair',
        maxBatchBytes: 128 * 1024,
      });
    const a = mk();
    const b = mk();
    await Promise.all([a.start(), b.start()]);
    const until = async (what: string, done: () => Promise<boolean> | boolean) => {
      // On a loaded machine the group's first rebalance can take a while: up to two minutes.
      for (let i = 0; i < 2400 && !(await done()); i++) await new Promise((r) => setTimeout(r, 50));
      if (!(await done())) throw new Error(`timed out waiting until ${what}`);
    };
    await until(
      'both instances own partitions',
      () => a.assignment().length > 0 && b.assignment().length > 0,
    );
    // Records for every partition: both instances apply some.
    await publish(brokers(), pair, records.slice(third, 2 * third));
    const applied = async (p: typeof a) => (await p.metrics.applied.get()).values[0]?.value ?? 0;
    await until(
      'both instances applied records',
      async () => (await applied(a)) > 0 && (await applied(b)) > 0,
    );
    // One stops; the rest of the log arrives after, so the other takes over its partitions mid-stream.
    await b.stop();
    await publish(brokers(), pair, records.slice(2 * third));
    await a.caughtUp();
    await a.stop();
    // Every table but the offsets (keyed by this topic's name) equals the single run's …
    const tables = [...VAULT_TABLES, 'dead_letters'];
    expect(await checksums(db.writerUrl, db.schema, tables)).toEqual(
      Object.fromEntries(tables.map((t) => [t, baseline[t]])),
    );
    // … and the offsets stored with them say every record was applied exactly once.
    const [stored] = await query<{ n: string }>(
      db.writerUrl,
      db.schema,
      `select sum(next_offset)::text as n from consumer_offsets where topic = $1`,
      [pair],
    );
    expect(Number(stored?.n)).toBe(records.length);
  }, 240_000);
});

describe('projector: poison records', () => {
  it('dead-letters bad JSON, a schema failure and a log-rule break, loudly, and projects the rest', async () => {
    const topic = uniqueTopic('proj-poison');
    await createTopic(brokers(), topic, 1);
    const gen = createHistoryGenerator({ vaults: 2, seed: 5 });
    const before = gen.take(40);
    const m = gen.vaults()[0] as VaultModel;
    const badJson = Buffer.from('{"schemaVersion":1,');
    const badSchema = Buffer.from(JSON.stringify({ ...before[1], vault: 'not-an-address' }));
    // The fold is total over what the chain accepted; it refuses only log-rule breaks, such as a
    // record of a vault whose vault.created it never saw (envelope).
    const stranger = `0x${'ab'.repeat(20)}` as const;
    // Numbered 1, as a first record: a later number would be a gap (held, kind `gap`).
    const refused = { ...before[1]!, vault: stranger, seq: 1 } as VaultRecord;
    const after = gen.take(40);
    await publish(brokers(), topic, before, [
      { key: m.vault, value: badJson },
      { key: m.vault, value: badSchema },
    ]);
    await publish(brokers(), topic, [refused, ...after]);

    const db = await database('poison');
    const p = projector({ brokers: brokers(), url: db.writerUrl, schema: db.schema, topic, group: 'poison' });
    await p.start();
    await p.caughtUp();
    const counted = (await p.metrics.deadLetters.get()).values;
    await p.stop();

    const letters = await query<{ offset: number; partition: number; value: Buffer; reason: string }>(
      db.writerUrl,
      db.schema,
      'select partition, "offset", value, reason from dead_letters order by "offset"',
    );
    expect(letters.map((l) => l.offset)).toEqual([40, 41, 42]);
    expect(letters.every((l) => l.partition === 0)).toBe(true);
    expect(letters[0]?.reason).toMatch(/^not JSON/);
    expect(letters[0]?.value.equals(badJson)).toBe(true);
    expect(letters[1]?.reason).toMatch(/^schema: vault/);
    expect(letters[1]?.value.equals(badSchema)).toBe(true);
    expect(letters[2]?.reason).toMatch(/before vault\.created/);
    expect(Object.fromEntries(counted.map((c) => [c.labels.kind, c.value]))).toEqual({
      decode: 2,
      envelope: 1,
    });
    const kinds = await query<{ vault: string | null; kind: string }>(
      db.writerUrl,
      db.schema,
      'select vault, kind from dead_letters order by "offset"',
    );
    expect(kinds).toEqual([
      { vault: m.vault, kind: 'decode' },
      { vault: m.vault, kind: 'decode' },
      { vault: stranger, kind: 'envelope' },
    ]);
    // The vault whose records could not be read says so in its snapshot; the stranger has none.
    const snaps = await query<{ vault: string; behind: unknown }>(
      db.writerUrl,
      db.schema,
      `select vault, snapshot::jsonb -> 'behind' as behind from vault_snapshot order by vault`,
    );
    expect(snaps.find((x) => x.vault === m.vault)?.behind).toEqual({
      deadLetters: 2,
      kinds: ['decode'],
      first: { partition: 0, offset: '40' },
    });
    expect(snaps.filter((x) => x.vault !== m.vault).every((x) => x.behind === null)).toBe(true);
    expect(snaps.some((x) => x.vault === stranger)).toBe(false);

    // Everything else is projected, including the vault's records after the poison.
    const [ledger] = await query<{ n: number }>(
      db.writerUrl,
      db.schema,
      'select count(*)::int as n from ledger',
    );
    expect(ledger?.n).toBe([...before, ...after].filter((r) => r.type !== 'mark').length);
    const applied = await query<{ vault: string; records_applied: number }>(
      db.writerUrl,
      db.schema,
      'select vault, records_applied from vault_snapshot',
    );
    const all = [...before, ...after];
    for (const row of applied) {
      expect(row.records_applied).toBe(all.filter((r) => r.vault === row.vault).length);
    }
    const [offset] = await query<{ next_offset: number }>(
      db.writerUrl,
      db.schema,
      'select next_offset from consumer_offsets',
    );
    expect(offset?.next_offset).toBe(before.length + 3 + after.length);
  });
});

describe('projector: revert', () => {
  it('removes the orphaned rows and re-folds the vault to the canonical history', async () => {
    const gen = createHistoryGenerator({ vaults: 3, seed: 8 });
    const history = gen.take(90);
    const m = gen.vaults()[0] as VaultModel;
    const b = gen.block() + 10;
    const orphanHashes = [blockHash(b + 1, 1), blockHash(b + 2, 1), blockHash(b + 3, 1)];
    const orphaned: VaultRecord[] = [
      gen.record(
        m,
        'deposit',
        { from: m.owner, token: m.token1, amount: '5000000000' },
        { block: b + 1, blockHash: orphanHashes[0] as `0x${string}` },
      ),
      gen.record(m, 'mark', {}, { block: b + 2, blockHash: orphanHashes[1] as `0x${string}` }),
      gen.record(m, 'mark', {}, { block: b + 3, blockHash: orphanHashes[2] as `0x${string}` }),
    ];
    const revert = gen.record(
      m,
      'revert',
      {
        fromBlock: b + 1,
        orphanedBlockHashes: orphanHashes as [`0x${string}`],
        fromSeq: orphaned[0]!.seq!,
      },
      { block: b + 3, blockHash: blockHash(b + 3) },
    );
    const canonical: VaultRecord[] = [
      gen.record(m, 'mark', {}, { block: b + 1, blockHash: blockHash(b + 1) }),
      gen.record(m, 'mark', {}, { block: b + 3, blockHash: blockHash(b + 3) }),
    ];

    const reorged = uniqueTopic('proj-reorg');
    const straight = uniqueTopic('proj-straight');
    await createTopic(brokers(), reorged, 2);
    await createTopic(brokers(), straight, 2);
    // The orphaned records land in an earlier batch than the revert.
    await publish(brokers(), reorged, [...history, ...orphaned]);
    const db = await database('reorg');
    const p = projector({
      brokers: brokers(),
      url: db.writerUrl,
      schema: db.schema,
      topic: reorged,
      group: 'reorg',
    });
    await p.start();
    await p.caughtUp();
    const [mid] = await query<{ n: number }>(
      db.writerUrl,
      db.schema,
      `select count(*)::int as n from ledger
       where vault = ${hexToBytes('$1')} and ${bytesToHex('block_hash')} = any($2) and type <> 'balance.reconciled'`,
      [m.vault, orphanHashes],
    );
    // The deposit; the two marks have no ledger rows (re-folds take them from the bundles).
    expect(mid?.n).toBe(1);
    // The revert, the canonical records, then the revert again (a republished duplicate).
    await publish(brokers(), reorged, [revert, ...canonical, revert]);
    await p.caughtUp();
    const reverts = (await p.metrics.reverts.get()).values[0]?.value;
    await p.stop();

    // The same canonical history seen by a projector that never got the orphaned records (the
    // indexer crashed before publishing them): their numbers are missing, and that is no gap.
    await publish(brokers(), straight, [...history, revert, ...canonical]);
    const expected = await project(straight, 'straight');

    const [left] = await query<{ n: number }>(
      db.writerUrl,
      db.schema,
      `select count(*)::int as n from ledger where ${bytesToHex('block_hash')} = any($1)`,
      [orphanHashes],
    );
    expect(left?.n).toBe(0);
    expect(reverts).toBe(1);
    expect(await checksums(db.writerUrl, db.schema, VAULT_TABLES)).toEqual(
      await checksums(expected.writerUrl, expected.schema, VAULT_TABLES),
    );
  });

  it('a revert that orphans only marks (no ledger rows) drops them and re-folds the vault', async () => {
    const gen = createHistoryGenerator({ vaults: 2, seed: 31 });
    const history = gen.take(60);
    const m = gen.vaults()[0] as VaultModel;
    const b = gen.block() + 10;
    const orphanHashes = [blockHash(b + 1, 1), blockHash(b + 2, 1)] as [`0x${string}`, `0x${string}`];
    // Marks of a fork where the vault's token was worth half as much: value, equity points and
    // the snapshot all move with them.
    const price = m.price0;
    m.price0 = price / 2;
    const orphaned = [
      gen.record(m, 'mark', {}, { block: b + 1, blockHash: orphanHashes[0] }),
      gen.record(m, 'mark', {}, { block: b + 2, blockHash: orphanHashes[1] }),
    ];
    m.price0 = price;
    const revert = gen.record(
      m,
      'revert',
      { fromBlock: b + 1, orphanedBlockHashes: orphanHashes, fromSeq: orphaned[0]!.seq! },
      { block: b + 2, blockHash: blockHash(b + 2) },
    );
    const canonical = [gen.record(m, 'mark', {}, { block: b + 2, blockHash: blockHash(b + 2) })];

    const reorged = uniqueTopic('proj-reorg-marks');
    const straight = uniqueTopic('proj-straight-marks');
    await createTopic(brokers(), reorged, 1);
    await createTopic(brokers(), straight, 1);
    await publish(brokers(), reorged, [...history, ...orphaned]);
    const db = await database('reorg_marks');
    const p = projector({
      brokers: brokers(),
      url: db.writerUrl,
      schema: db.schema,
      topic: reorged,
      group: 'rm',
    });
    await p.start();
    await p.caughtUp();
    await publish(brokers(), reorged, [revert, ...canonical]);
    await p.caughtUp();
    const reverts = (await p.metrics.reverts.get()).values[0]?.value;
    await p.stop();

    await publish(brokers(), straight, [...history, revert, ...canonical]);
    const expected = await project(straight, 'straight_marks');
    expect(reverts).toBe(1);
    expect(await checksums(db.writerUrl, db.schema, VAULT_TABLES)).toEqual(
      await checksums(expected.writerUrl, expected.schema, VAULT_TABLES),
    );
    // The vault's bundles: what survived the revert, written again as one, and the canonical mark's.
    const [bundles] = await query<{ n: number; flagged: boolean }>(
      db.writerUrl,
      db.schema,
      'select count(*)::int as n, bool_and(marks_off_ledger) as flagged from record_bundles where vault = $1',
      [m.vault],
    );
    expect(bundles).toEqual({ n: 2, flagged: true });
  });

  it('a vault created in the orphaned blocks goes with the revert and is created again from seq 1', async () => {
    const gen = createHistoryGenerator({ vaults: 2, seed: 21 });
    const history = gen.take(40);
    const fresh = createHistoryGenerator({ vaults: 1, seed: 99, startBlock: gen.block() + 10 });
    // The canonical chain creates it too (the indexer numbers it from 1 again: a new registry entry).
    const canonical = fresh.take(3);
    expect(canonical.map((r) => [r.type, r.seq])).toEqual([
      ['vault.created', 1],
      [canonical[1]!.type, 2],
      [canonical[2]!.type, 3],
    ]);
    const orphaned = canonical.map((r) => ({ ...r, blockHash: blockHash(r.blockNumber, 1) }));
    const first = canonical[0]!.blockNumber;
    const revert = fresh.record(
      fresh.vaults()[0]!,
      'revert',
      {
        fromBlock: first,
        orphanedBlockHashes: [...new Set(orphaned.map((r) => r.blockHash))],
        fromSeq: 1,
      },
      { block: first - 1, blockHash: blockHash(first - 1) },
    );
    expect(revert.seq).toBe(4);
    const reorged = uniqueTopic('proj-reorg-born');
    const straight = uniqueTopic('proj-straight-born');
    await createTopic(brokers(), reorged, 1);
    await createTopic(brokers(), straight, 1);
    // One batch: the revert and the new vault.created are folded in the same transaction.
    await publish(brokers(), reorged, [...history, ...orphaned, revert, ...canonical]);
    await publish(brokers(), straight, [...history, ...canonical]);
    const got = await project(reorged, 'reorg_born');
    const want = await project(straight, 'straight_born');
    expect(await query(got.writerUrl, got.schema, 'select 1 from dead_letters')).toEqual([]);
    expect(await checksums(got.writerUrl, got.schema, VAULT_TABLES)).toEqual(
      await checksums(want.writerUrl, want.schema, VAULT_TABLES),
    );
  });
});
