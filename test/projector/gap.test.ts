import { createLogger } from '@vault-yield/common';
import type { VaultRecord } from '@vault-yield/domain';
import { retryDeadLetters } from '@vault-yield/projector';
import { bytesToHex, createPgPool, createProjectionStore, hexToBytes } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { afterAll, describe, expect, it } from 'vitest';
import { checksums, createTopic, deleteTopics, projector, publish, query, VAULT_TABLES } from './support.js';

const silent = createLogger({ name: 'gap-test', level: 'silent' });
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

/** md5 of a vault table's rows, without the given vaults. */
async function othersSum(db: TestDatabase, table: string, except: string[]): Promise<string> {
  const order =
    table === 'ledger'
      ? 'vault, chain_id, block_hash, tx_hash, log_index'
      : table === 'equity_points'
        ? 'vault, seq'
        : table === 'positions'
          ? 'vault, position_id'
          : 'vault';
  const cols =
    table === 'vault_snapshot'
      ? `vault, to_jsonb(vault_snapshot) - 'last_seq' - 'log_topic' - 'log_partition' as r`
      : table === 'ledger'
        ? // commit_xid (migration 0021): which transaction wrote the row, differs by run.
          `vault, chain_id, block_hash, tx_hash, log_index, to_jsonb(ledger) - 'commit_xid' as r`
        : '*';
  // The tables with a row per record key vaults as bytes (migration 0014).
  const vaultText = table === 'ledger' || table === 'equity_points' ? bytesToHex('vault') : 'vault';
  const [row] = await query<{ md5: string }>(
    db.writerUrl,
    db.schema,
    `select md5(coalesce(string_agg(t::text, E'\\n' order by ${order}), '')) as md5
       from (select ${cols} from ${table} where ${vaultText} <> all($1::text[])) t`,
    [except],
  );
  return row?.md5 ?? '';
}

/**
 * A record lost on its way to the log (removed before publishing) leaves a gap in its vault's
 * sequence numbers: the projector holds that vault at the gap (snapshot `behind.gap`, dead
 * letters of kind `gap`, metric) and every other vault folds on; once the missing record is
 * published again, the held records are folded and the tables equal a clean run's.
 */
describe('projector: a gap in a vault stream', () => {
  it('holds the vault, not folding past the gap, and resumes to a clean run once the record is republished', async () => {
    const brokers = kafkaBrokers();
    const gen = createHistoryGenerator({ vaults: 8, seed: 17 });
    const records = gen.take(1_200);
    const [, x, y] = gen.vaults();
    const ofX = records.filter((r) => r.vault === x!.vault);
    const ofY = records.filter((r) => r.vault === y!.vault);
    // X loses a record in the middle of its history; Y its very first (vault.created).
    const lostX = ofX[Math.floor(ofX.length / 3)] as VaultRecord;
    const lostY = ofY[0] as VaultRecord;
    expect(lostY.type).toBe('vault.created');
    const held = [x!.vault, y!.vault];

    const clean = uniqueTopic('proj-gap-clean');
    const gapped = uniqueTopic('proj-gap');
    await createTopic(brokers, clean);
    await createTopic(brokers, gapped);
    await publish(brokers, clean, records);
    await publish(
      brokers,
      gapped,
      records.filter((r) => r !== lostX && r !== lostY),
    );

    const cleanDb = await database('gap_clean');
    const c = projector({
      brokers,
      url: cleanDb.writerUrl,
      schema: cleanDb.schema,
      topic: clean,
      group: 'clean',
    });
    await c.start();
    await c.caughtUp();
    await c.stop();

    const db = await database('gap_run');
    const p = projector({ brokers, url: db.writerUrl, schema: db.schema, topic: gapped, group: 'gap' });
    await p.start();
    await p.caughtUp();
    const gapLetters = (await p.metrics.deadLetters.get()).values.find((v) => v.labels.kind === 'gap')?.value;
    await p.stop();

    // X stands at the record before the gap: nothing after it folded, all of it held.
    const [sx] = await query<{ last_seq: string; held: boolean; behind: Record<string, unknown> }>(
      db.writerUrl,
      db.schema,
      `select last_seq::text, held, snapshot->'behind' as behind from vault_snapshot where vault = $1`,
      [x!.vault],
    );
    expect(sx?.held).toBe(true);
    expect(Number(sx?.last_seq)).toBe(lostX.seq! - 1);
    const before = ofX.filter((r) => r.seq! < lostX.seq!);
    const after = ofX.filter((r) => r.seq! > lostX.seq!);
    expect(sx?.behind).toMatchObject({
      kinds: ['gap'],
      deadLetters: after.length,
      gap: {
        lastSeq: lostX.seq! - 1,
        missingFrom: lostX.seq,
        missingTo: lostX.seq,
        toBlock: after[0]!.blockNumber,
      },
    });
    const [lx] = await query<{ n: number; max: number }>(
      db.writerUrl,
      db.schema,
      `select count(*)::int as n, max(block_number)::int as max from ledger where vault = ${hexToBytes('$1')} and type <> 'balance.reconciled'`,
      [x!.vault],
    );
    // Marks have no ledger rows (last_seq above says the fold reached the gap, marks included).
    const ledgered = before.filter((r) => r.type !== 'mark');
    expect(lx).toEqual({ n: ledgered.length, max: ledgered.at(-1)!.blockNumber });
    // Y never folded: no snapshot, every record held.
    const letters = await query<{ vault: string; kind: string; n: number }>(
      db.writerUrl,
      db.schema,
      'select vault, kind, count(*)::int as n from dead_letters group by vault, kind order by vault',
    );
    expect(letters).toEqual(
      [
        { vault: x!.vault, kind: 'gap', n: after.length },
        { vault: y!.vault, kind: 'gap', n: ofY.length - 1 },
      ].sort((a, b) => (a.vault < b.vault ? -1 : 1)),
    );
    expect(gapLetters).toBe(after.length + ofY.length - 1);
    expect(
      await query(db.writerUrl, db.schema, 'select 1 from vault_snapshot where vault = $1', [y!.vault]),
    ).toEqual([]);
    const lettersBefore = await checksums(db.writerUrl, db.schema, ['dead_letters']);
    // Every other vault is exactly as in the clean run.
    for (const t of VAULT_TABLES)
      expect(await othersSum(db, t, held), t).toBe(await othersSum(cleanDb, t, held));

    // A dead-letter retry does not fold past the gap either: the letters stay, with what to do.
    const pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'gap-retry', max: 2 });
    try {
      const outcomes = await retryDeadLetters(createProjectionStore(pool), silent);
      expect(outcomes).toHaveLength(2);
      for (const o of outcomes)
        expect(o).toMatchObject({ ok: false, reason: expect.stringMatching(/still missing/) });
    } finally {
      await pool.end();
    }
    expect(await checksums(db.writerUrl, db.schema, ['dead_letters'])).toEqual(lettersBefore);

    // The missing records are published again (after the held ones): a fresh instance (no
    // cached states) folds them, then the held records, and nothing is left behind.
    await publish(brokers, gapped, [lostY, lostX]);
    const q = projector({ brokers, url: db.writerUrl, schema: db.schema, topic: gapped, group: 'gap' });
    await q.start();
    await q.caughtUp();
    const released = (await q.metrics.released.get()).values[0]?.value;
    await q.stop();
    expect(released).toBe(after.length + ofY.length - 1);
    expect(await query(db.writerUrl, db.schema, 'select 1 from dead_letters')).toEqual([]);
    const want = await checksums(cleanDb.writerUrl, cleanDb.schema, [...VAULT_TABLES, 'dead_letters']);
    expect(await checksums(db.writerUrl, db.schema, [...VAULT_TABLES, 'dead_letters'])).toEqual(want);
    const [sx2] = await query<{ last_seq: string; held: boolean }>(
      db.writerUrl,
      db.schema,
      'select last_seq::text, held from vault_snapshot where vault = $1',
      [x!.vault],
    );
    expect(sx2).toEqual({ last_seq: String(ofX.at(-1)!.seq), held: false });
  });

  it('releases held records within the batch that fills the gap (one instance, no restart)', async () => {
    const brokers = kafkaBrokers();
    const gen = createHistoryGenerator({ vaults: 3, seed: 5 });
    const records = gen.take(150);
    const lost = records.filter((r) => r.vault === gen.vaults()[0]!.vault)[4] as VaultRecord;
    const topic = uniqueTopic('proj-gap-live');
    const clean = uniqueTopic('proj-gap-live-clean');
    await createTopic(brokers, topic, 1);
    await createTopic(brokers, clean, 1);
    await publish(brokers, clean, records);
    // The lost record arrives late, once, and again (a duplicate) with the rest.
    const i = records.indexOf(lost);
    await publish(brokers, topic, [
      ...records.slice(0, i),
      ...records.slice(i + 1, i + 20),
      lost,
      ...records.slice(i + 20),
      lost,
    ]);
    const cleanDb = await database('gap_live_clean');
    const c = projector({
      brokers,
      url: cleanDb.writerUrl,
      schema: cleanDb.schema,
      topic: clean,
      group: 'c',
    });
    await c.start();
    await c.caughtUp();
    await c.stop();
    const db = await database('gap_live');
    const p = projector({ brokers, url: db.writerUrl, schema: db.schema, topic, group: 'g' });
    await p.start();
    await p.caughtUp();
    await p.stop();
    expect(await checksums(db.writerUrl, db.schema, [...VAULT_TABLES, 'dead_letters'])).toEqual(
      await checksums(cleanDb.writerUrl, cleanDb.schema, [...VAULT_TABLES, 'dead_letters']),
    );
  });
});
