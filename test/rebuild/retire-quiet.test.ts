import { ROLES } from '@vault-yield/devstack/postgres';
import type { Projector } from '@vault-yield/projector';
import {
  createPgPool,
  getBuild,
  migrate,
  type Pool,
  recordBuild,
  schemaExists,
  storedOffsetRows,
} from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli/run.js';
import { createTopic, deleteTopics, projector, publish } from '../projector/support.js';

/**
 * `vault-yield rebuild retire --grace 0` on a real Postgres, with a real projector still folding
 * Kafka records into the schema the views were just switched away from (the operator has not
 * stopped it yet): the schema is left in place, said so with how long ago it was last written,
 * dry run or not, until it has been quiet for --quiet-for (default 60 s). A schema an open
 * transaction uses (a projector mid-batch) is reported busy and left, without the drop queueing
 * behind the transaction.
 */
const VIEWS = 'vault_yield_api';

describe('vault-yield rebuild retire: quiet period and busy schemas', () => {
  let db: TestDatabase;
  let pool: Pool;
  let old: Projector | undefined;
  let env: Record<string, string>;
  const topic = uniqueTopic('vault-records');
  const gen = createHistoryGenerator({ vaults: 6, seed: 31 });

  const retire = async (...args: string[]) => {
    const res = await runCli(['rebuild', 'retire', '--grace', '0', ...args], env);
    expect(res.code, res.stderr).toBe(0);
    return res.stdout;
  };
  const appliedBy = async (schema: string, group: string) =>
    (await storedOffsetRows(pool, schema, { groupId: group, topic })).reduce(
      (n, r) => n + Math.max(0, Number(r.nextOffset)),
      0,
    );

  beforeAll(async () => {
    db = await createTestDatabase('retire_quiet');
    pool = createPgPool({ url: db.writerUrl, applicationName: 'retire-quiet-test', max: 2 });
    await createTopic(kafkaBrokers(), topic, 2);
    await publish(kafkaBrokers(), topic, gen.take(120));
    for (const schema of ['vault_yield_old', 'vault_yield_new']) {
      await migrate(pool, schema, ROLES.reader);
      await recordBuild(pool, VIEWS, { schema, purpose: 'rebuild', groupId: schema, topic, market: null });
    }
    env = cliEnv(db, { topic, views: VIEWS });
  }, 120_000);

  afterAll(async () => {
    await old?.stop();
    await pool?.end();
    await deleteTopics();
    await db?.drop();
  });

  it('leaves a retired schema a projector still writes to, whatever the grace, until it has been quiet', async () => {
    // vault_yield_old is live and its projector folds the log.
    const first = await runCli(['rebuild', 'switch', '--schema', 'vault_yield_old'], env);
    expect(first.code, first.stderr).toBe(0);
    old = projector({
      brokers: kafkaBrokers(),
      url: db.writerUrl,
      schema: 'vault_yield_old',
      topic,
      group: 'vault_yield_old',
    });
    await old.start();
    await old.caughtUp({ timeoutMs: 60_000 });
    // The switch to vault_yield_new; the old projector is not stopped and keeps folding.
    const sw = await runCli(['rebuild', 'switch', '--schema', 'vault_yield_new'], env);
    expect(sw.code, sw.stderr).toBe(0);
    expect(await getBuild(pool, VIEWS, 'vault_yield_old')).toMatchObject({ state: 'retired' });
    await publish(kafkaBrokers(), topic, gen.take(60));
    await old.caughtUp({ timeoutMs: 60_000 });
    expect(await appliedBy('vault_yield_old', 'vault_yield_old')).toBe(180);

    const inUse =
      /^retire: vault_yield_old: kept \(in use: last written \d+(\.\d)?m?s ago \(\d{4}-\d\d-\d\dT[^)]+Z\), within the quiet period of 1m: a projector may still be writing to it; left in place/m;
    const dry = await retire('--dry-run');
    expect(dry).toMatch(inUse);
    expect(dry).toMatch(/^retire: vault_yield_new: kept \(live\)$/m);
    expect(await retire()).toMatch(inUse);
    expect(await schemaExists(pool, 'vault_yield_old')).toBe(true);
    expect(await getBuild(pool, VIEWS, 'vault_yield_old')).toMatchObject({ state: 'retired' });
    // It was left whole: the projector still folds into it.
    await publish(kafkaBrokers(), topic, gen.take(20));
    await old.caughtUp({ timeoutMs: 60_000 });
    expect(await appliedBy('vault_yield_old', 'vault_yield_old')).toBe(200);

    // Stopped, and quiet for two minutes (its offsets backdated): past the default quiet period,
    // not past a longer one asked for.
    await old.stop();
    old = undefined;
    await pool.query(`update vault_yield_old.consumer_offsets set updated_at = now() - interval '2 minutes'`);
    expect(await retire('--quiet-for', '5m')).toMatch(
      /^retire: vault_yield_old: kept \(in use: last written 2m(\d+s)? ago .*, within the quiet period of 5m: /m,
    );
    expect(await retire('--dry-run')).toMatch(
      /^retire: vault_yield_old: would-drop \(retired since .*, last written 2m(\d+s)? ago\)$/m,
    );
    expect(await schemaExists(pool, 'vault_yield_old')).toBe(true);
    expect(await retire()).toMatch(
      /^retire: vault_yield_old: dropped \(retired since .*, last written 2m(\d+s)? ago\)$/m,
    );
    expect(await schemaExists(pool, 'vault_yield_old')).toBe(false);
    expect(await getBuild(pool, VIEWS, 'vault_yield_old')).toMatchObject({ state: 'dropped' });
  }, 150_000);

  it('reports a schema an open transaction uses as busy and leaves it, without waiting on its locks', async () => {
    const sw = await runCli(['rebuild', 'switch', '--schema', db.schema], env);
    expect(sw.code, sw.stderr).toBe(0);
    expect(await getBuild(pool, VIEWS, 'vault_yield_new')).toMatchObject({ state: 'retired' });
    // A projector's batch transaction, first statement (lockPartition), not committed yet.
    const other = createPgPool({ url: db.writerUrl, applicationName: 'mid-batch', max: 1 });
    const batch = await other.connect();
    try {
      await batch.query('begin');
      await batch.query(
        `insert into vault_yield_new.consumer_offsets as o (group_id, topic, partition, next_offset)
         values ('vault_yield_new', $1, 0, -1)
         on conflict (group_id, topic, partition) do update set next_offset = o.next_offset`,
        [topic],
      );
      const busy =
        /^retire: vault_yield_new: kept \(busy, left in place: open transactions use it \(pid \d+ mid-batch RowExclusiveLock\)\)$/m;
      expect(await retire('--dry-run')).toMatch(busy);
      expect(await retire()).toMatch(busy);
      expect(await schemaExists(pool, 'vault_yield_new')).toBe(true);
      // The transaction was not disturbed: it still commits.
      await batch.query('commit');
    } finally {
      await batch.query('rollback').catch(() => {});
      batch.release();
      await other.end();
    }
    // Committed just now: a write within the quiet period. Backdated: dropped.
    expect(await retire()).toMatch(/^retire: vault_yield_new: kept \(in use: last written /m);
    await pool.query(
      `update vault_yield_new.consumer_offsets set updated_at = now() - interval '90 seconds'`,
    );
    expect(await retire()).toMatch(
      /^retire: vault_yield_new: dropped \(retired since .*, last written 1m\d+s ago\)$/m,
    );
    expect(await schemaExists(pool, 'vault_yield_new')).toBe(false);
    expect(await retire()).toMatch(/^retire: vault_yield: kept \(live\)$/m);
  }, 120_000);
});
