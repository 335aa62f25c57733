import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator, prng } from '@vault-yield/test-kit/history';
import { afterAll, describe, expect, it } from 'vitest';
import { watchStarted } from '../faults/projector-proc.js';
import { checksums, createTopic, deleteTopics, projector, publish, query } from './support.js';

const RECORDS = 24_000;
const KILLS = 12;
const root = join(import.meta.dirname, '..', '..');

/**
 * Exactly-once under failure: the projector runs as a child process and is SIGKILLed at random
 * points (many mid-transaction) while it consumes the log; each time it is restarted. The final
 * tables must equal those of a clean in-process run, row for row.
 */
describe('projector exactly-once under SIGKILL', () => {
  const dbs: TestDatabase[] = [];
  const children = new Set<ChildProcess>();
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const db of dbs) await db.drop();
    await deleteTopics();
  });

  it(`survives ${KILLS} SIGKILLs over ${RECORDS} records with the tables of a clean run`, async () => {
    const brokers = kafkaBrokers();
    const topic = uniqueTopic('proj-crash');
    await createTopic(brokers, topic);
    const gen = createHistoryGenerator({ vaults: 400, seed: 42 });
    const first = gen.take(RECORDS / 2);
    const second = gen.take(RECORDS / 2);
    const rand = prng(9);
    // Poison in the middle, and a republished slice (duplicates) at the end.
    const poison = Array.from({ length: 5 }, (_, i) => ({
      key: `poison-${i}`,
      value: Buffer.from(`{not json ${i}`),
    }));
    const start = Math.floor(rand() * (RECORDS / 2));
    await publish(brokers, topic, first, poison);
    await publish(brokers, topic, [...second, ...first.slice(start, start + 1000)]);
    const total = RECORDS + poison.length + 1000;

    // The clean run.
    const clean = await createTestDatabase('crash_clean');
    dbs.push(clean);
    const p = projector({ brokers, url: clean.writerUrl, schema: clean.schema, topic, group: 'clean' });
    await p.start();
    await p.caughtUp({ timeoutMs: 150_000 });
    await p.stop();
    const expected = await checksums(clean.writerUrl, clean.schema);
    expect(expected.ledger?.rows).toBe([...first, ...second].filter((r) => r.type !== 'mark').length);
    expect(expected.dead_letters?.rows).toBe(poison.length);

    // The crash run.
    const db = await createTestDatabase('crash_run');
    dbs.push(db);
    const logFile = join(tmpdir(), `${topic}.log`);
    const out = createWriteStream(logFile);
    const progress = async () => {
      const [row] = await query<{ n: string | null }>(
        db.writerUrl,
        db.schema,
        `select sum(next_offset)::text as n from consumer_offsets where group_id = 'crash' and next_offset >= 0`,
      );
      return Number(row?.n ?? 0);
    };
    const run = (i: number, logLevel = 'warn') => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'services/projector/src/main.ts'], {
        cwd: root,
        env: {
          ...process.env,
          KAFKA_BROKERS: brokers.join(','),
          DATABASE_URL: db.writerUrl,
          PROJECTION_SCHEMA: db.schema,
          KAFKA_TOPIC: topic,
          CONSUMER_GROUP: 'crash',
          // A fresh Kafka group per run: no waiting for the killed member's session to expire.
          KAFKA_GROUP_ID: `crash-${topic}-${i}`,
          KAFKA_SESSION_TIMEOUT_MS: '6000',
          PROJECTOR_MAX_BATCH_BYTES: String(256 * 1024),
          MIGRATE: 'false',
          // The vault projector alone: the strategy topics are not part of this run.
          MARKET_PROJECTION: 'false',
          LOG_LEVEL: logLevel,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout?.pipe(out, { end: false });
      child.stderr?.pipe(out, { end: false });
      children.add(child);
      // Up (at info) once its consumer runs and SIGTERM is its shutdown.
      const up = watchStarted(child);
      const exited = new Promise<number | null>((resolve) =>
        child.on('exit', (code) => {
          children.delete(child);
          resolve(code);
        }),
      );
      return { child, exited, up };
    };
    const waitFor = async (pred: () => Promise<boolean>, exited: Promise<unknown>, what: string) => {
      let dead = false;
      void exited.then(() => {
        dead = true;
      });
      const deadline = Date.now() + 60_000;
      while (!(await pred())) {
        if (dead) throw new Error(`projector exited while waiting for ${what}; see ${logFile}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; see ${logFile}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };

    let midStream = 0;
    for (let i = 0; i < KILLS; i++) {
      const { child, exited } = run(i);
      const target = Math.floor(((i + 1) * RECORDS) / (KILLS + 2));
      await waitFor(async () => (await progress()) >= target, exited, `offset ${target}`);
      await new Promise((r) => setTimeout(r, rand() * 300));
      if ((await progress()) < total) midStream++;
      child.kill('SIGKILL');
      await exited;
    }
    // The killed runs may have folded the whole log already: the last one is stopped only once it
    // is up (and has folded what was left).
    const last = run(KILLS, 'info');
    await waitFor(async () => last.up() && (await progress()) >= total, last.exited, 'the end of the log');
    last.child.kill('SIGTERM');
    expect(await last.exited).toBe(0);
    out.end();

    // All but a couple of kills land before the end of the log (a fast run may finish early).
    expect(midStream).toBeGreaterThanOrEqual(KILLS - 2);
    const actual = await checksums(db.writerUrl, db.schema);
    expect(actual).toEqual(expected);
  }, 240_000);
});
