import { bytesToHex } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { checksums, createTopic, deleteTopics, projector, publish, query } from '../projector/support.js';
import { type ProjectorProcess, spawnProjector } from './projector-proc.js';
import { historyWithReverts } from './streams.js';
import { until } from './support.js';

const RECORDS = 12_000;
const KILLS = 4;

/**
 * SIGKILL of the projector process, restarted in the SAME Kafka consumer group each time: the
 * killed member is still in the group until its session expires, so the restarted one waits for
 * that rebalance and must then seek to the offsets stored in Postgres, not Kafka's. The stream
 * carries reverts (reorgs), the records whose exactly-once effect is hardest.
 */
describe('projector SIGKILLed and restarted in the same consumer group, reverts in the stream', () => {
  const dbs: TestDatabase[] = [];
  const procs: ProjectorProcess[] = [];
  afterAll(async () => {
    for (const p of procs) if (!p.dead()) p.child.kill('SIGKILL');
    for (const db of dbs) await db.drop();
    await deleteTopics();
  });

  it(`${KILLS} SIGKILLs mid-stream leave the tables of a clean run`, async () => {
    const brokers = kafkaBrokers();
    const topic = uniqueTopic('fault-same-group');
    await createTopic(brokers, topic);
    const { records } = historyWithReverts({ records: RECORDS, vaults: 150, reorgs: 6, seed: 15 });
    await publish(brokers, topic, records);

    const clean = await createTestDatabase('fault_group_clean');
    dbs.push(clean);
    const p = projector({ brokers, url: clean.writerUrl, schema: clean.schema, topic, group: 'clean' });
    await p.start();
    await p.caughtUp({ timeoutMs: 120_000 });
    await p.stop();
    const expected = await checksums(clean.writerUrl, clean.schema);
    expect(expected.ledger?.rows).toBeGreaterThan(RECORDS / 2);

    const db = await createTestDatabase('fault_group_run');
    dbs.push(db);
    const progress = async () => {
      const [row] = await query<{ n: string | null }>(
        db.writerUrl,
        db.schema,
        `select sum(next_offset)::text as n from consumer_offsets where group_id = 'same' and next_offset >= 0`,
      );
      return Number(row?.n ?? 0);
    };
    const env = {
      KAFKA_BROKERS: brokers.join(','),
      DATABASE_URL: db.writerUrl,
      PROJECTION_SCHEMA: db.schema,
      KAFKA_TOPIC: topic,
      CONSUMER_GROUP: 'same',
      // One Kafka group for every run: the session-expiry path, not a fresh group per restart.
      KAFKA_GROUP_ID: `same-${topic}`,
      PROJECTOR_MAX_BATCH_BYTES: String(128 * 1024),
    };
    const total = records.length;
    let midStream = 0;
    for (let i = 0; i < KILLS; i++) {
      const proc = spawnProjector(`same-group-${i}`, env);
      procs.push(proc);
      // Kills over the first two thirds: a fast projector folds the fifth after the last of
      // (KILLS + 1) targets within one 100 ms poll, and that kill would find the log's end.
      const target = Math.floor(((i + 1) * total) / (KILLS + 2));
      await until(async () => {
        if (proc.dead()) throw new Error(`projector exited; see ${proc.logFile}`);
        return (await progress()) >= target;
      }, `offset ${target} (see ${proc.logFile})`);
      proc.child.kill('SIGKILL');
      await proc.exited;
      // Mid-stream: what it committed before it died is not the whole log.
      if ((await progress()) < total) midStream++;
    }
    const last = spawnProjector('same-group-last', env);
    procs.push(last);
    await until(async () => {
      if (last.dead()) throw new Error(`projector exited; see ${last.logFile}`);
      // The killed runs may have folded the whole log: stopped only once it is up.
      return last.up() && (await progress()) >= total;
    }, `the end of the log (see ${last.logFile})`);
    last.child.kill('SIGTERM');
    expect(await last.exited).toBe(0);

    expect(midStream).toBe(KILLS);
    expect(await checksums(db.writerUrl, db.schema)).toEqual(expected);
    const [orphans] = await query<{ n: number }>(
      db.writerUrl,
      db.schema,
      `select count(*)::int as n from ledger where ${bytesToHex('block_hash')} in (${records
        .filter((r) => r.type === 'revert')
        .flatMap((r) => (r.payload as { orphanedBlockHashes: string[] }).orphanedBlockHashes)
        .map((h) => `'${h}'`)
        .join(',')})`,
    );
    expect(orphans?.n).toBe(0);
  }, 300_000);
});
