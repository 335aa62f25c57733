import type { TestDatabase } from '@vault-yield/test-kit';
import { kafkaBrokers, uniqueTopic } from '@vault-yield/test-kit';
import { errorCode, startReader, type TestReader } from '@vault-yield/test-kit/reader';
import { afterAll, describe, expect, it } from 'vitest';
import { checksums, createTopic, deleteTopics, projector, publish, query } from '../projector/support.js';
import { type ProjectorProcess, spawnProjector } from './projector-proc.js';
import { historyWithReverts } from './streams.js';
import { type OwnPostgres, startOwnPostgres, until } from './support.js';

const RECORDS = 16_000;

/**
 * Postgres restarts (an immediate stop: sessions cut mid-transaction) while the projector folds
 * and the reader serves. A Postgres cluster of this test's own, never the machine's. The projector
 * process must ride it out by itself, the reader answer 503 `unavailable` while it is down and
 * recover without a restart, and the tables end equal to a clean run's.
 */
describe('Postgres restart mid-batch', () => {
  let pg: OwnPostgres | undefined;
  let api: TestReader | undefined;
  const procs: ProjectorProcess[] = [];
  afterAll(async () => {
    for (const p of procs) if (!p.dead()) p.child.kill('SIGKILL');
    await api?.stop().catch(() => {});
    await pg?.destroy();
    await deleteTopics();
  });

  it('projector and reader resume by themselves; the tables equal a clean run', async () => {
    // The WAL writer waits its longest: a commit that is not flushed at its commit (synchronous_commit
    // off) stays in memory for seconds, so a crash would surely take back what was served.
    pg = await startOwnPostgres({ wal_writer_delay: '10s' });
    const brokers = kafkaBrokers();
    const topic = uniqueTopic('fault-pg');
    await createTopic(brokers, topic);
    const { records } = historyWithReverts({ records: RECORDS, vaults: 200, reorgs: 4, seed: 21 });
    const half = Math.floor(records.length / 2);
    await publish(brokers, topic, records.slice(0, half));

    const clean: TestDatabase = await pg.database('clean');
    const db: TestDatabase = await pg.database('restart');
    const progress = async () => {
      const [row] = await query<{ n: string | null }>(
        db.writerUrl,
        db.schema,
        `select sum(next_offset)::text as n from consumer_offsets where group_id = 'pg' and next_offset >= 0`,
      );
      return Number(row?.n ?? 0);
    };
    const proc = spawnProjector('pg-restart', {
      KAFKA_BROKERS: brokers.join(','),
      DATABASE_URL: db.writerUrl,
      PROJECTION_SCHEMA: db.schema,
      KAFKA_TOPIC: topic,
      CONSUMER_GROUP: 'pg',
      KAFKA_GROUP_ID: `pg-${topic}`,
      PROJECTOR_MAX_BATCH_BYTES: String(128 * 1024),
    });
    procs.push(proc);
    api = await startReader(db);
    const alive = () => {
      if (proc.dead()) throw new Error(`projector exited; see ${proc.logFile}`);
    };
    await until(async () => {
      alive();
      return (await progress()) >= half / 3;
    }, 'the projector under way');
    const [some] = await query<{ vault: string }>(
      db.writerUrl,
      db.schema,
      'select vault from vault_snapshot limit 1',
    );
    const vault = some?.vault as string;
    expect((await api.get(`/v1/vault/${vault}/snapshot`)).status).toBe(200);

    // Down while batches are in flight; the rest of the log arrives meanwhile. What was committed
    // (and so served, streamed and called back) the instant before the crash must survive it.
    const before = await progress();
    const served = await query<{ vault: string; n: string }>(
      db.writerUrl,
      db.schema,
      'select vault, records_applied::text as n from vault_snapshot',
    );
    const [streamed] = await query<{ seq: string | null }>(
      db.writerUrl,
      db.schema,
      'select max(seq)::text as seq from stream_commits',
    );
    await pg.stop();
    const publishing = publish(brokers, topic, records.slice(half));
    for (const path of [`/v1/vault/${vault}/snapshot`, '/v1/vaults', '/ready']) {
      const res = await api.get(path);
      expect(res.status, path).toBe(503);
      expect(errorCode(res), path).toBe('unavailable');
    }
    expect((await api.get('/health')).status).toBe(200);
    await publishing;
    // Down long enough for the projector to fail batches and for pool connections to die.
    await new Promise((r) => setTimeout(r, 5_000));
    alive();
    // The projector is frozen while Postgres comes back, so what the crash kept is read before
    // anything folds again (a lost commit would otherwise be re-folded from Kafka unseen).
    proc.child.kill('SIGSTOP');
    await pg.start();

    // The reader recovers without a restart.
    await until(async () => (await api!.get('/ready')).status === 200, 'the reader ready again');
    expect((await api.get(`/v1/vault/${vault}/snapshot`)).status).toBe(200);
    // Nothing committed before the crash was taken back (the fold commits durably): every vault
    // served then is served still, at least as far along; the stream's head did not move back.
    const after = new Map(
      (
        await query<{ vault: string; n: string }>(
          db.writerUrl,
          db.schema,
          'select vault, records_applied::text as n from vault_snapshot',
        )
      ).map((r) => [r.vault, Number(r.n)]),
    );
    const regressed = served.filter((r) => !((after.get(r.vault) ?? -1) >= Number(r.n)));
    expect(regressed, 'snapshots taken back by the crash').toEqual([]);
    const [head] = await query<{ seq: string | null }>(
      db.writerUrl,
      db.schema,
      'select max(seq)::text as seq from stream_commits',
    );
    expect(BigInt(head?.seq ?? '0')).toBeGreaterThanOrEqual(BigInt(streamed?.seq ?? '0'));
    proc.child.kill('SIGCONT');
    // The projector resumes and reaches the end of the log.
    await until(async () => {
      alive();
      return (await progress()) >= records.length;
    }, `the end of the log (see ${proc.logFile})`);
    expect(before).toBeLessThan(half);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);

    const p = projector({ brokers, url: clean.writerUrl, schema: clean.schema, topic, group: 'clean' });
    await p.start();
    await p.caughtUp({ timeoutMs: 120_000 });
    await p.stop();
    const expected = await checksums(clean.writerUrl, clean.schema);
    expect(expected.ledger?.rows).toBeGreaterThan(RECORDS / 2);
    const actual = await checksums(db.writerUrl, db.schema);
    // consumer_offsets rows carry the group; compare the projection tables and offsets by value.
    expect(actual).toEqual(expected);
  }, 300_000);
});
