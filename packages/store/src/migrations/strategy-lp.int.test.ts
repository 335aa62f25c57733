import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool, type Pool } from '../pool/index.js';
import { strategyList } from '../queries/catalogue.js';
import { writeStrategyStats } from '../strategy/stats.js';
import { migrate, migrations } from './index.js';

/**
 * Migration 0031 (the LP figures per strategy, issue #46 item 8) on a schema that holds a
 * catalogue: its rows keep their figures and serve every LP figure null until the next refresh;
 * the LP figures are null whenever live_apr is (a check), and written with it.
 */

const SCHEMA = 'upgrade_0030_catalogue';
let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('strategy_lp_upgrade');
  pool = createPgPool({ url: db.writerUrl, schema: SCHEMA, applicationName: 'strategy-lp-upgrade', max: 1 });
  await pool.query(`create schema ${SCHEMA}`);
  await pool.query(
    'create table schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now(), checksum text)',
  );
  for (const m of migrations().filter((m) => m.version <= 30)) {
    await pool.query(m.sql);
    await pool.query('insert into schema_migrations (version, name, checksum) values ($1, $2, $3)', [
      m.version,
      m.name,
      m.checksum,
    ]);
  }
  await pool.query(
    `insert into strategies (id, name, live_apr, sigma, history_days, display_order, updated_at)
     values ('ripe', 'Ripe', 0.12, 0.3, 45, 0, 1), ('young', 'Young', null, null, 3, 1, 1)`,
  );
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const NULLS = {
  feeApr: null,
  rewardApr: null,
  timeInRange: null,
  rebalancesPerWeek: null,
  divergenceApr: null,
  maxDrawdown: null,
};

describe('0031 strategies’ LP figures', () => {
  it('an upgraded catalogue keeps its figures and serves the LP figures null until a refresh', async () => {
    expect((await migrate(pool, SCHEMA)).applied).toEqual(
      migrations()
        .filter((m) => m.version >= 31)
        .map((m) => m.version),
    );
    expect(await strategyList(pool)).toEqual([
      {
        id: 'ripe',
        name: 'Ripe',
        description: '',
        riskNote: '',
        pairs: [],
        liveApr: 0.12,
        sigma: 0.3,
        lp: NULLS,
      },
      {
        id: 'young',
        name: 'Young',
        description: '',
        riskNote: '',
        pairs: [],
        liveApr: null,
        sigma: null,
        lp: NULLS,
      },
    ]);
  });

  it('written with live_apr; never present while live_apr is null; bounded shares', async () => {
    const lp = {
      feeApr: 0.183456,
      rewardApr: 0.01,
      timeInRange: 0.75,
      rebalancesPerWeek: 1.5,
      divergenceApr: -0.041,
      maxDrawdown: 0.062,
    };
    await writeStrategyStats(pool, [
      { id: 'ripe', liveApr: 0.13, sigma: 0.31, historyDays: 46, lp },
      { id: 'young', liveApr: null, sigma: null, historyDays: 4 }, // no lp: nulls
    ]);
    const rows = new Map((await strategyList(pool)).map((s) => [s.id, s]));
    expect(rows.get('ripe')).toMatchObject({ liveApr: 0.13, lp });
    expect(rows.get('young')!.lp).toEqual(NULLS);
    await expect(pool.query(`update strategies set lp_fee_apr = 0.1 where id = 'young'`)).rejects.toThrow(
      /strategies_lp_with_live_apr/,
    );
    await expect(
      pool.query(`update strategies set lp_time_in_range = 1.01 where id = 'ripe'`),
    ).rejects.toThrow(/check constraint/);
    await expect(
      pool.query(`update strategies set lp_max_drawdown = -0.1 where id = 'ripe'`),
    ).rejects.toThrow(/check constraint/);
    // A later refresh that finds too little history clears them with live_apr.
    await writeStrategyStats(pool, [
      { id: 'ripe', liveApr: null, sigma: null, historyDays: 2, lp: { ...NULLS } },
    ]);
    expect((await strategyList(pool)).find((s) => s.id === 'ripe')!.lp).toEqual(NULLS);
  });
});
