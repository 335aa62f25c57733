import { ROLES } from '@vault-yield/devstack/postgres';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../migrations/index.js';
import { createPgPool, type Pool } from '../pool/index.js';
import { compareSchemas, STRATEGY_FIGURES, schemaChecksums } from './checksum.js';
import { finalizeBuildSchema, prepareBuildSchema } from './lifecycle.js';
import { getBuild, listBuilds, markBuild, recordBuild } from './meta.js';
import { dropSchemaUnlessBusy, retireSchemas } from './retire.js';
import { liveSchema, switchLive } from './switch.js';

const VIEWS = 'api';

describe('store admin: schema lifecycle, live switch, checksums, retire', () => {
  let db: TestDatabase;
  let pool: Pool;
  let readerPool: Pool;

  const seed = async (schema: string, owner = 'o1') => {
    await pool.query(
      `insert into ${schema}.vault_snapshot (vault, chain_id, owner, strategy, status, snapshot, state, last_record_id, records_applied, created_at, updated_at)
       values ('0xv1', 1, $1, 's', 'idle', '{"a":1}', '{}', 'r1', 1, 10, 20),
              ('0xv2', 1, 'o2', 's', 'idle', '{"a":2}', '{}', 'r2', 1, 10, 20)`,
      [owner],
    );
    await pool.query(`insert into ${schema}.strategies (id, name, updated_at) values ('s', 'S', $1)`, [
      Date.now() + Math.floor(Math.random() * 1000),
    ]);
  };

  const schemaExists = async (schema: string) =>
    ((await pool.query(`select 1 from pg_namespace where nspname = $1`, [schema])).rowCount ?? 0) > 0;

  beforeAll(async () => {
    db = await createTestDatabase('admin');
    pool = createPgPool({ url: db.writerUrl, applicationName: 'admin-test', max: 4 });
    readerPool = createPgPool({
      url: db.readerUrl,
      schema: VIEWS,
      applicationName: 'admin-test-reader',
      max: 4,
    });
    await seed(db.schema);
  });
  afterAll(async () => {
    await readerPool?.end();
    await pool?.end();
    await db?.drop();
  });

  it('prepare makes a build schema unlogged without secondary indexes; finalize restores both, and resumes', async () => {
    await recordBuild(pool, VIEWS, {
      schema: 'b1',
      purpose: 'rebuild',
      groupId: 'g1',
      topic: 't',
      market: null,
    });
    await prepareBuildSchema(pool, { viewsSchema: VIEWS, schema: 'b1', unlogged: true, deferIndexes: true });
    const indexes = async (schema: string) =>
      (
        await pool.query<{ i: string }>(
          `select indexname as i from pg_indexes where schemaname = $1 order by 1`,
          [schema],
        )
      ).rows.map((r) => r.i);
    const unlogged = async (schema: string) =>
      (
        await pool.query<{ n: number }>(
          `select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
           where n.nspname = $1 and c.relkind = 'r' and c.relpersistence = 'u'`,
          [schema],
        )
      ).rows[0]!.n;
    const reference = await indexes(db.schema);
    const during = await indexes('b1');
    expect(during).not.toContain('ledger_vault_ts');
    expect(during).toContain('ledger_pkey');
    expect(during).toContain('dead_letters_topic_partition_offset_key'); // unique: kept (ON CONFLICT needs it)
    expect(await unlogged('b1')).toBeGreaterThan(10);
    const build = (await getBuild(pool, VIEWS, 'b1'))!;
    expect(build.prepared).toBe(true);
    expect(build.deferredIndexes.length).toBe(reference.length - during.length);
    // Preparing again (a resumed build) changes nothing.
    await prepareBuildSchema(pool, { viewsSchema: VIEWS, schema: 'b1', unlogged: true, deferIndexes: true });
    expect(await indexes('b1')).toEqual(during);

    await seed('b1');
    // A crash after one index was rebuilt: finalize skips it.
    await pool.query('create index ledger_vault_ts on b1.ledger (vault, ts desc)');
    const report = await finalizeBuildSchema(pool, VIEWS, 'b1');
    expect(report.indexes).not.toContain('ledger_vault_ts');
    expect(await indexes('b1')).toEqual(reference);
    expect(await unlogged('b1')).toBe(0);
    expect((await getBuild(pool, VIEWS, 'b1'))!.deferredIndexes).toEqual([]);
  });

  it('switchLive points the views at a schema atomically; the read-only role reads views, not bookkeeping', async () => {
    const first = await switchLive(pool, { viewsSchema: VIEWS, target: db.schema, readerRole: ROLES.reader });
    expect(first.previous).toBeNull();
    expect(first.views).toContain('vault_snapshot');
    expect(first.views).not.toContain('indexer_checkpoint');
    expect(await liveSchema(pool, VIEWS)).toBe(db.schema);
    const owner = async () =>
      (await readerPool.query<{ owner: string }>(`select owner from vault_snapshot where vault = '0xv1'`))
        .rows[0]?.owner;
    expect(await owner()).toBe('o1');
    await expect(readerPool.query(`select * from ${VIEWS}.vy_builds`)).rejects.toThrow(/permission denied/);
    await expect(readerPool.query(`update vault_snapshot set owner = 'x'`)).rejects.toThrow();

    await pool.query(`update b1.vault_snapshot set owner = 'o1-b1' where vault = '0xv1'`);
    // Readers hammering the views while the switch flips back and forth never fail and only ever
    // see one schema or the other.
    let running = true;
    const seen = new Set<string>();
    const errors: string[] = [];
    const hammer = async () => {
      while (running) {
        try {
          const o = await owner();
          if (o) seen.add(o);
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
    };
    const readers = [hammer(), hammer(), hammer()];
    for (let i = 0; i < 10; i++) {
      await switchLive(pool, {
        viewsSchema: VIEWS,
        target: i % 2 ? db.schema : 'b1',
        readerRole: ROLES.reader,
      });
    }
    running = false;
    await Promise.all(readers);
    expect(errors).toEqual([]);
    expect([...seen].sort()).toEqual(['o1', 'o1-b1']);
    expect(await liveSchema(pool, VIEWS)).toBe(db.schema);
    expect(await owner()).toBe('o1');
    const builds = await listBuilds(pool, VIEWS);
    expect(builds.find((b) => b.schema === db.schema)?.state).toBe('live');
    expect(builds.find((b) => b.schema === 'b1')?.state).toBe('retired');
  });

  it('switchLive refuses a schema that is not migrated or still unlogged', async () => {
    await pool.query('create schema empty_one');
    await expect(switchLive(pool, { viewsSchema: VIEWS, target: 'empty_one' })).rejects.toThrow(
      /migration 0/,
    );
    await recordBuild(pool, VIEWS, {
      schema: 'b2',
      purpose: 'rebuild',
      groupId: 'g2',
      topic: 't',
      market: null,
    });
    await prepareBuildSchema(pool, { viewsSchema: VIEWS, schema: 'b2', unlogged: true, deferIndexes: true });
    await expect(switchLive(pool, { viewsSchema: VIEWS, target: 'b2' })).rejects.toThrow(/unlogged/);
    expect(await liveSchema(pool, VIEWS)).toBe(db.schema);
  });

  it('compareSchemas finds changed rows and ignores wall-clock columns', async () => {
    await migrate(pool, 'c1');
    await migrate(pool, 'c2');
    await seed('c1');
    await seed('c2'); // strategies.updated_at differs: excluded
    let diffs = await compareSchemas(pool, 'c1', 'c2');
    expect(diffs.filter((d) => !d.equal)).toEqual([]);
    expect(diffs.map((d) => d.table)).not.toContain('consumer_offsets');
    expect(await schemaChecksums(pool, 'c1')).toEqual(await schemaChecksums(pool, 'c2'));

    // json columns compare by value: the same JSON spaced and ordered differently is equal.
    const { rows: js } = await pool.query<{ s: Record<string, unknown> }>(
      `select snapshot as s from c2.vault_snapshot where vault = '0xv2'`,
    );
    const reordered = Object.fromEntries(Object.entries(js[0]!.s).reverse());
    await pool.query(`update c2.vault_snapshot set snapshot = $1::json where vault = '0xv2'`, [
      JSON.stringify(reordered, null, 2),
    ]);
    expect((await compareSchemas(pool, 'c1', 'c2')).filter((d) => !d.equal)).toEqual([]);

    await pool.query(`update c2.vault_snapshot set snapshot = '{"a":3}' where vault = '0xv2'`);
    diffs = await compareSchemas(pool, 'c1', 'c2');
    const bad = diffs.filter((d) => !d.equal);
    expect(bad.map((d) => d.table)).toEqual(['vault_snapshot']);
    expect(bad[0]!.left!.rows).toBe(2);
    expect(bad[0]!.onlyLeft).toHaveLength(1);
    expect(bad[0]!.onlyLeft[0]).toContain('0xv2');
    expect(bad[0]!.onlyRight[0]).toContain('""a"": 3');

    await pool.query(`delete from c2.strategies`);
    expect((await compareSchemas(pool, 'c1', 'c2', { tables: ['strategies'] }))[0]!.equal).toBe(false);
  });

  it('compareSchemas --chain: only that chain’s rows, in the tables keyed by chain (#45)', async () => {
    await migrate(pool, 'c5');
    await migrate(pool, 'c6');
    await seed('c5');
    await seed('c6');
    // The same address on chain 2, differing between the two schemas.
    for (const [s, value] of [
      ['c5', '{"a":5}'],
      ['c6', '{"a":6}'],
    ] as const)
      await pool.query(
        `insert into ${s}.vault_snapshot (vault, chain_id, owner, strategy, status, snapshot, state, last_record_id, records_applied, created_at, updated_at)
         values ('0xv1', 2, 'o1', 's', 'idle', $1, '{}', 'r1', 1, 10, 20)`,
        [value],
      );
    await pool.query(`delete from c6.strategies`);
    const one = await compareSchemas(pool, 'c5', 'c6', { chainId: 1 });
    expect(one.filter((d) => !d.equal)).toEqual([]);
    // Tables without a chain (the strategies gather every chain) are left out, not compared.
    expect(one.map((d) => d.table)).not.toContain('strategies');
    expect(one.map((d) => d.table)).toContain('vault_snapshot');
    const two = (await compareSchemas(pool, 'c5', 'c6', { chainId: 2 })).filter((d) => !d.equal);
    expect(two.map((d) => d.table)).toEqual(['vault_snapshot']);
    expect(two[0]!.left!.rows).toBe(1);
    expect(two[0]!.onlyRight[0]).toContain('6');
    const all = (await compareSchemas(pool, 'c5', 'c6')).filter((d) => !d.equal);
    expect(all.map((d) => d.table).sort()).toEqual(['strategies', 'vault_snapshot']);
  });

  it('compareSchemas and schemaChecksums compare the strategies’ live_apr / sigma / history_days (functions of the log): a tampered one is caught', async () => {
    await migrate(pool, 'c3');
    await migrate(pool, 'c4');
    await seed('c3');
    await seed('c4');
    for (const s of ['c3', 'c4'])
      await pool.query(`update ${s}.strategies set live_apr = 0.1234, sigma = 0.05, history_days = 40`);
    expect((await compareSchemas(pool, 'c3', 'c4')).filter((d) => !d.equal)).toEqual([]);
    for (const [column, value] of [
      ['live_apr', '0.9'],
      ['sigma', '0.5'],
      ['history_days', '41'],
    ] as const) {
      await pool.query(`update c4.strategies set ${column} = ${value}`);
      const bad = (await compareSchemas(pool, 'c3', 'c4')).filter((d) => !d.equal);
      expect(bad.map((d) => d.table)).toEqual(['strategies']);
      expect(bad[0]!.onlyRight.join('\n')).toContain(value);
      expect((await schemaChecksums(pool, 'c3')).strategies).not.toEqual(
        (await schemaChecksums(pool, 'c4')).strategies,
      );
      // verify's test for "only the figures differ" (a live refresh may be one behind):
      const [rest] = await compareSchemas(pool, 'c3', 'c4', {
        tables: ['strategies'],
        exclude: { strategies: STRATEGY_FIGURES },
      });
      expect(rest!.equal).toBe(true);
      await pool.query('update c4.strategies set live_apr = 0.1234, sigma = 0.05, history_days = 40');
    }
  });

  it('retire drops only retired schemas past the grace period that nothing writes to', async () => {
    // b1: retired by the switches above. b2: still building. db.schema: live.
    const later = new Date(Date.now() + 2 * 3_600_000);
    const dry = await retireSchemas(pool, { viewsSchema: VIEWS, graceMs: 3_600_000, dryRun: true });
    expect(dry.find((d) => d.schema === 'b1')?.action).toBe('kept'); // within grace
    expect(dry.find((d) => d.schema === db.schema)?.reason).toBe('live');

    await pool.query(
      `insert into b1.indexer_checkpoint (chain_id, block_number, block_hash) values (1, 1, '0x')`,
    );
    let out = await retireSchemas(pool, { viewsSchema: VIEWS, graceMs: 3_600_000, now: later });
    expect(out.find((d) => d.schema === 'b1')).toMatchObject({
      action: 'kept',
      reason: expect.stringMatching(
        /^in use, never dropped while used: holds the indexer checkpoint of a topic not recorded \(chain 1, block 1, last written \d{4}-.*Z\)$/,
      ),
    });
    await pool.query(`delete from b1.indexer_checkpoint`);

    out = await retireSchemas(pool, { viewsSchema: VIEWS, graceMs: 3_600_000, now: later });
    expect(out.find((d) => d.schema === 'b1')?.action).toBe('dropped');
    expect(out.find((d) => d.schema === 'b2')?.action).toBe('kept');
    expect(out.find((d) => d.schema === db.schema)?.action).toBe('kept');
    const exists = await pool.query(`select 1 from pg_namespace where nspname = 'b1'`);
    expect(exists.rowCount).toBe(0);
    expect((await getBuild(pool, VIEWS, 'b1'))?.state).toBe('dropped');
  });
  it('retire leaves a schema written within the quiet period (whatever the grace) or used by an open transaction', async () => {
    await migrate(pool, 'q1');
    await recordBuild(pool, VIEWS, {
      schema: 'q1',
      purpose: 'rebuild',
      groupId: 'gq',
      topic: 't',
      market: null,
    });
    await markBuild(pool, VIEWS, 'q1', { state: 'retired', retired: true });
    // What the projector's batch transaction writes.
    await pool.query(
      `insert into q1.consumer_offsets (group_id, topic, partition, next_offset, updated_at) values ('gq', 't', 0, 5, now())`,
    );
    const q1 = async (o: Partial<Parameters<typeof retireSchemas>[1]> = {}) =>
      (await retireSchemas(pool, { viewsSchema: VIEWS, graceMs: 0, ...o })).find((d) => d.schema === 'q1');
    const inUse = /^in use: last written \d+(\.\d)?m?s ago \(\d{4}-.*Z\), within the quiet period of 1m: /;
    expect(await q1({ dryRun: true })).toMatchObject({
      action: 'kept',
      reason: expect.stringMatching(inUse),
    });
    expect(await q1()).toMatchObject({ action: 'kept', reason: expect.stringMatching(inUse) });
    // The drop itself looks again once no batch can commit any more.
    expect(await dropSchemaUnlessBusy(pool, { schema: 'q1', quietMs: 60_000 })).toMatchObject({
      dropped: false,
      busy: false,
    });
    expect(await schemaExists('q1')).toBe(true);

    await pool.query(`update q1.consumer_offsets set updated_at = now() - interval '2 minutes'`);
    expect((await q1({ quietMs: 5 * 60_000 }))?.reason).toMatch(
      /^in use: last written 2m(\d+s)? ago .* quiet period of 5m: /,
    );
    expect(await q1({ dryRun: true })).toMatchObject({
      action: 'would-drop',
      reason: expect.stringMatching(/retired since .*, last written 2m(\d+s)? ago$/),
    });

    // A projector mid-batch: its transaction holds the offsets row (and a lock on the table).
    const other = createPgPool({ url: db.writerUrl, applicationName: 'admin-locker', max: 1 });
    const locker = await other.connect();
    try {
      await locker.query('begin');
      await locker.query(`update q1.consumer_offsets set next_offset = 6`);
      const busy =
        /^busy, left in place: open transactions use it \(pid \d+ admin-locker RowExclusiveLock\)$/;
      expect(await q1({ dryRun: true })).toMatchObject({
        action: 'kept',
        reason: expect.stringMatching(busy),
      });
      expect(await q1()).toMatchObject({ action: 'kept', reason: expect.stringMatching(busy) });
      // The drop waits for its locks no longer than the lock timeout.
      expect(
        await dropSchemaUnlessBusy(pool, { schema: 'q1', viewsSchema: VIEWS, lockTimeoutMs: 200 }),
      ).toEqual({
        dropped: false,
        busy: true,
      });
      expect(await schemaExists('q1')).toBe(true);
      expect((await getBuild(pool, VIEWS, 'q1'))?.state).toBe('retired');
    } finally {
      await locker.query('rollback');
      locker.release();
      await other.end();
    }
    expect(await q1()).toMatchObject({ action: 'dropped' });
    expect(await schemaExists('q1')).toBe(false);
    expect((await getBuild(pool, VIEWS, 'q1'))?.state).toBe('dropped');
  });

  it('retire says what uses the schema that predates the rebuilds, and advises its drop only when nothing does', async () => {
    // i0 was live before any rebuild, then switched away from (as `npm start`'s vault_yield).
    const views = 'api_initial';
    for (const schema of ['i0', 'i1']) await migrate(pool, schema);
    await switchLive(pool, { viewsSchema: views, target: 'i0' });
    await switchLive(pool, { viewsSchema: views, target: 'i1' });
    const i0 = async () =>
      (await retireSchemas(pool, { viewsSchema: views, graceMs: 0, quietMs: 60_000 })).find(
        (d) => d.schema === 'i0',
      );
    // The live indexer's checkpoint and the webhook endpoints live there.
    await pool.query(
      `insert into i0.indexer_checkpoint (chain_id, block_number, block_hash, topic, updated_at)
       values (1, 42, '0xab', 'dev-vault-records', '2026-11-28T10:00:00Z')`,
    );
    for (const url of ['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b'])
      await pool.query(
        `insert into i0.webhook_endpoints (url, ledger_schema, cursor_xid)
         values ($1, 'i0', pg_current_xact_id())`,
        [url],
      );
    const used = await i0();
    expect(used).toEqual({
      schema: 'i0',
      action: 'kept',
      reason:
        'schema predates the rebuilds; in use, never dropped while used: holds the indexer checkpoint of topic dev-vault-records (chain 1, block 42, last written 2026-11-28T10:00:00.000Z); holds 2 webhook endpoints (their delivery cursors)',
    });
    expect(used?.reason).not.toMatch(/drop it/);

    await pool.query('delete from i0.webhook_endpoints');
    expect((await i0())?.reason).toMatch(
      /in use, never dropped while used: holds the indexer checkpoint of topic dev-vault-records/,
    );
    await pool.query('delete from i0.indexer_checkpoint');

    // A projector pinned to it still writes there.
    await pool.query(
      `insert into i0.consumer_offsets (group_id, topic, partition, next_offset, updated_at) values ('g', 't', 0, 5, now())`,
    );
    expect((await i0())?.reason).toMatch(
      /^schema predates the rebuilds; in use, never dropped while used: a projector wrote to it \d+(\.\d)?m?s ago /,
    );

    // Nothing uses it any more: only now is a drop (by hand) advised; retire itself never drops it.
    await pool.query(`update i0.consumer_offsets set updated_at = now() - interval '2 hours'`);
    expect(await i0()).toEqual({
      schema: 'i0',
      action: 'kept',
      reason: expect.stringMatching(
        /^schema predates the rebuilds; nothing uses it \(no indexer checkpoint, no webhook endpoint, last written 2h(\d+m)? ago\): drop it by hand once no service has it as PROJECTION_SCHEMA, INDEXER_SCHEMA or WEBHOOKS_SCHEMA \(drop schema i0 cascade\)$/,
      ),
    });
    expect(await schemaExists('i0')).toBe(true);
  });
});
