import { ROLES } from '@vault-yield/devstack/postgres';
import { createPgPool, migrate, type Pool } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { startReader } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopics } from '../projector/support.js';
import { createOldSchema, fixtureLog, foldTopic, publishRaw, type RawLog } from './support.js';

/**
 * #45: a database and a log of the single-chain layout (migration 0027, the build before vaults
 * were keyed by chain) upgrade without a re-index and are served the same.
 *
 * fixtures/ hold what the build of 011753e wrote (fixtures/README.md says how): a schema's rows
 * after folding 239 records of 4 vaults — one record left out, so a vault is held behind a gap
 * (29 dead letters of kind gap) — and the log itself as that build's publisher wrote it (key =
 * vault address, binary records): the folded part, then the rest (the missing record first).
 *
 * The upgraded schema continues from its stored offsets on the same log; a fresh schema folds the
 * whole log with this build. Every projection table and every served figure must be the same.
 */

const CHAIN = 31337;
const OLD = 'at0027';

let db: TestDatabase;
let pool: Pool;
let topic: string;
let log: RawLog;

/**
 * What fold version 5 adds (#46) and a projection folded before lacks until a rebuild (the fixture
 * was folded by fold version 4; test/upgrade/fold-v5.test.ts checks those): the snapshot's and
 * state's \`lp\`, positions' \`timeInRange\`, the equity points' holding value. Dropped wherever found.
 */
const LP_KEYS = new Set(['lp', 'timeInRange', 'hold_usd', 'holdValueUsd']);
function withoutLp(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(withoutLp);
  if (x === null || typeof x !== 'object') return x;
  return Object.fromEntries(
    Object.entries(x)
      .filter(([k]) => !LP_KEYS.has(k))
      .map(([k, v]) => [k, withoutLp(v)]),
  );
}

/**
 * The equity series of the upgraded schema is the fresh one's without the points where only the
 * holding value moved (fold version 4 makes none there): each upgraded row is a fresh row.
 */
function expectSubseries(upgraded: unknown[], fresh: unknown[], what: string): void {
  const left = fresh.map((r) => JSON.stringify(withoutLp(r)));
  let at = 0;
  for (const row of upgraded) {
    const key = JSON.stringify(withoutLp(row));
    while (at < left.length && left[at] !== key) at++;
    expect(at < left.length, `${what}: ${key}`).toBe(true);
    at++;
  }
}

/** A table's rows in one order, as JSON, without the columns that say when or in which transaction. */
async function rows(schema: string, table: string, order: string, minus: string[] = []): Promise<unknown[]> {
  const drop = minus.map((c) => ` - '${c}'`).join('');
  const { rows: out } = await pool.query<{ r: unknown }>(
    `select to_jsonb(t)${drop} as r from ${schema}.${table} t order by ${order}`,
  );
  return out.map((r) => r.r);
}

beforeAll(async () => {
  log = fixtureLog();
  topic = uniqueTopic('upgrade-0027');
  await createTopic(kafkaBrokers(), topic);
  db = await createTestDatabase('upgrade0028');
  pool = createPgPool({ url: db.writerUrl, applicationName: 'upgrade-0028-test', max: 2 });
  // The old schema: migrations up to 0027, as the build before this one applied them.
  await createOldSchema(pool, OLD, topic);
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
  await deleteTopics();
});

describe('upgrade from the single-chain layout (0027 → 0028)', () => {
  let before: { vault: string; snapshot: string }[];

  it('keys every vault row by the schema chain, rewrites no figure, and leaves nothing behind', async () => {
    before = (
      await pool.query<{ vault: string; snapshot: string }>(
        `select vault, snapshot::text as snapshot from ${OLD}.vault_snapshot order by vault`,
      )
    ).rows;
    expect(before).toHaveLength(4);
    const counts = async () =>
      (
        await pool.query<{ t: string; n: number }>(
          `select 'positions' t, count(*)::int n from ${OLD}.positions union all
           select 'equity', count(*)::int from ${OLD}.equity_points union all
           select 'bundles', count(*)::int from ${OLD}.record_bundles union all
           select 'letters', count(*)::int from ${OLD}.dead_letters union all
           select 'ledger', count(*)::int from ${OLD}.ledger`,
        )
      ).rows;
    const was = await counts();

    const writer = createPgPool({
      url: db.writerUrl,
      schema: OLD,
      applicationName: 'upgrade-migrate',
      max: 1,
    });
    try {
      const result = await migrate(writer, OLD, ROLES.reader);
      expect(result.applied).toContain(28);
    } finally {
      await writer.end();
    }
    expect(await counts()).toEqual(was);

    // The snapshot text: the vault's id and chain first, then every byte it had.
    const after = (
      await pool.query<{ vault: string; chain_id: number; snapshot: string }>(
        `select vault, chain_id, snapshot::text as snapshot from ${OLD}.vault_snapshot order by vault`,
      )
    ).rows;
    let rewritten = 0;
    for (const [i, row] of after.entries()) {
      const old = before[i] as { vault: string; snapshot: string };
      expect(row.chain_id).toBe(CHAIN);
      const id = `eip155:${CHAIN}:${row.vault}`;
      if (old.snapshot.startsWith('{"vault":'))
        expect(row.snapshot).toBe(`{"id":"${id}","chainId":${CHAIN},${old.snapshot.slice(1)}`);
      else {
        // A snapshot a `behind` note rewrote (the held vault: jsonb's text): the same object plus both.
        rewritten++;
        expect(JSON.parse(row.snapshot)).toEqual({ ...JSON.parse(old.snapshot), id, chainId: CHAIN });
      }
    }
    expect(rewritten).toBe(1);
    for (const table of ['positions', 'equity_points', 'record_bundles', 'dead_letters']) {
      const { rows: chains } = await pool.query<{ chain_id: number | null; n: number }>(
        `select chain_id, count(*)::int n from ${OLD}.${table} group by chain_id`,
      );
      expect(chains, table).toEqual([{ chain_id: CHAIN, n: expect.any(Number) }]);
    }
    const { rows: commits } = await pool.query<{ vaults: string[] }>(
      `select vaults from ${OLD}.stream_commits order by seq`,
    );
    expect(commits.length).toBeGreaterThan(0);
    for (const c of commits)
      for (const v of c.vaults) expect(v).toMatch(new RegExp(`^eip155:${CHAIN}:0x[0-9a-f]{40}$`));
  });

  it('continues the log it was folding and ends where a fresh fold of the whole log ends', async () => {
    await publishRaw(topic, log.folded);
    await publishRaw(topic, log.rest);
    // The upgraded schema resumes at its stored offsets (the rest, whose first record releases the
    // held vault); a fresh schema folds the whole log with this build.
    await foldTopic(db.writerUrl, OLD, topic, 'live');
    await foldTopic(db.writerUrl, db.schema, topic, 'fresh');

    const fresh = db.schema;
    const { rows: held } = await pool.query<{ n: number }>(`select count(*)::int n from ${OLD}.dead_letters`);
    expect(held[0]?.n).toBe(0);

    // Served: the snapshot the reader sends as stored (but the LP figures, null until a rebuild).
    const served = async (schema: string) =>
      (
        await pool.query<{ id: string; snapshot: string }>(
          `select chain_id || ':' || vault id, snapshot::text snapshot from ${schema}.vault_snapshot order by chain_id, vault`,
        )
      ).rows.map((r) => ({ id: r.id, snapshot: withoutLp(JSON.parse(r.snapshot)) }));
    const upgradedSnapshots = await served(OLD);
    expect(upgradedSnapshots).toHaveLength(4);
    expect(upgradedSnapshots).toEqual(await served(fresh));

    // Every projection row, but where it was read from (log_topic) and in which transaction.
    const same = async (table: string, order: string, minus: string[] = []) =>
      expect(withoutLp(await rows(OLD, table, order, minus)), table).toEqual(
        withoutLp(await rows(fresh, table, order, minus)),
      );
    await same('vault_snapshot', 'chain_id, vault');
    await same('positions', 'chain_id, vault, position_id');
    expectSubseries(
      await rows(OLD, 'equity_points', 'chain_id, vault, ts, seq'),
      await rows(fresh, 'equity_points', 'chain_id, vault, ts, seq'),
      'equity_points',
    );
    await same('ledger', 'chain_id, vault, block_number, tx_index, log_index, block_hash', ['commit_xid']);
  });

  it('serves the same over HTTP: every vault by its id and by its bare address, its equity and its events', async () => {
    const readers = [await startReader({ ...db, schema: OLD }), await startReader(db)];
    try {
      const { rows: vaults } = await pool.query<{ vault: string }>(
        `select vault from ${OLD}.vault_snapshot order by vault`,
      );
      const paths = ['/v1/vaults?limit=10'];
      for (const { vault } of vaults)
        for (const name of [`eip155:${CHAIN}:${vault}`, vault])
          paths.push(
            `/v1/vault/${name}/snapshot`,
            `/v1/vault/${name}/equity?points=50`,
            `/v1/vault/${name}/events?limit=500`,
          );
      for (const path of paths) {
        const [upgraded, fresh] = await Promise.all(readers.map((r) => r.get(path)));
        expect(upgraded?.status, path).toBe(200);
        if (path.includes('/equity'))
          expectSubseries(upgraded?.body as unknown[], fresh?.body as unknown[], path);
        else expect(withoutLp(upgraded?.body), path).toEqual(withoutLp(fresh?.body));
      }
    } finally {
      for (const r of readers) await r.stop();
    }
  });
});
