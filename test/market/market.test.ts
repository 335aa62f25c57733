import { createLogger } from '@vault-yield/common';
import { createPublisher } from '@vault-yield/log';
import { createPgPool, type Pool } from '@vault-yield/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMarketProjector, refreshStrategyStats } from '../../services/projector/src/market/index.js';
import { makeCatalogue, makeScreen } from '../fixtures/screen.js';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '../harness/index.js';

const until = async (check: () => Promise<boolean>, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 200));
  }
};

describe('market projector (screen + catalogue topics)', () => {
  let db: TestDatabase;
  let pool: Pool;
  const screenTopic = uniqueTopic('screen');
  const catalogueTopic = uniqueTopic('catalogue');
  const log = createLogger({ name: 'test', level: 'warn' });
  const projector = () =>
    createMarketProjector({
      brokers: kafkaBrokers(),
      pool,
      logger: log,
      screenTopic,
      catalogueTopic,
      groupId: 'market-test',
      statsIntervalMs: 0,
      minDailyReturns: 30,
    });

  beforeAll(async () => {
    db = await createTestDatabase('market');
    pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'test', max: 4 });
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  async function publish(topic: string, values: (unknown | string)[]) {
    const publisher = await createPublisher({ brokers: kafkaBrokers(), clientId: 'test', topic });
    await publisher.publishRaw(
      values.map((v) => ({ key: 'k', value: Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)) })),
    );
    await publisher.close();
  }
  const version = async () =>
    (await pool.query('select version from screen_meta')).rows[0]?.version as string | undefined;

  it('newest wins under out-of-order and duplicate delivery; poison goes to dead letters', async () => {
    const p = projector();
    await p.start();
    try {
      await publish(catalogueTopic, [makeCatalogue(1000)]);
      await publish(screenTopic, [
        makeScreen('b', 2000, 0),
        makeScreen('a', 1000, 1), // older, arrives later
        '{"not": "a screen"}', // poison
        makeScreen('b', 2000, 0), // duplicate
      ]);
      await until(
        async () => (await pool.query('select count(*)::int as n from dead_letters')).rows[0].n === 1,
      );
      await until(async () => (await version()) === 'b');
      const { rows } = await pool.query('select reason, "offset" from dead_letters');
      expect(rows[0].reason).toMatch(/^schema: /);
      expect(rows[0].offset).toBe(2);
      const pairs = await pool.query(`select pairs from strategies where id = 'steady-eth'`);
      expect(pairs.rows[0].pairs).toEqual([{ a: 'WETH', b: 'USDC', venues: ['uniswap-v3'] }]);

      // A newer screen re-ranks: the strategy's pairs follow it.
      await publish(screenTopic, [makeScreen('c', 3000, 1)]);
      await until(async () => (await version()) === 'c');
      const after = await pool.query(`select pairs from strategies where id = 'steady-eth'`);
      expect(after.rows[0].pairs).toEqual([{ a: 'WBTC', b: 'USDC', venues: ['uniswap-v3'] }]);
    } finally {
      await p.stop();
    }
  });

  it('a restarted projector resumes from its stored offsets and changes nothing', async () => {
    const before = await pool.query('select * from screen_meta');
    const p = projector();
    await p.start();
    await new Promise((r) => setTimeout(r, 1500));
    await p.stop();
    const after = await pool.query('select * from screen_meta');
    expect(after.rows).toEqual(before.rows);
    expect((await pool.query('select count(*)::int as n from dead_letters')).rows[0].n).toBe(1);
  });

  describe('liveApr and sigma', () => {
    const DAY = 86_400_000;
    const t0 = Date.UTC(2026, 0, 1, 12);

    /** A vault history: daily growth g_d, a deposit on day 10 and a withdrawal on day 20. */
    function history(days: number) {
      const points: { ts: number; v: number; i: number; o: number }[] = [{ ts: t0, v: 1000, i: 1000, o: 0 }];
      let v = 1000;
      let cin = 1000;
      let cout = 0;
      const growth: number[] = [];
      for (let d = 1; d <= days; d++) {
        const g = 0.001 * ((d % 7) - 3); // −0.3 % … +0.3 %
        growth.push(g);
        v = v * (1 + g);
        if (d === 10) {
          // Deposit after the day's market move, in the same sub-period: flows are removed.
          v += 500;
          cin += 500;
        }
        if (d === 20) {
          v -= 300;
          cout += 300;
        }
        points.push({ ts: t0 + d * DAY, v, i: cin, o: cout });
      }
      return { points, growth };
    }

    async function seed(vault: string, strategy: string, days: number) {
      const { points, growth } = history(days);
      await pool.query(
        `insert into vault_snapshot (vault, chain_id, owner, strategy, status, snapshot, state, last_record_id, records_applied, created_at, updated_at)
         values ($1, 31337, $1, $2, 'earning', '{}', '{}', 'x', $3, $4, $4)`,
        [vault, strategy, points.length, t0],
      );
      await pool.query(
        `insert into equity_points (vault, ts, block_number, seq, value_usd, capital_in_usd, capital_out_usd)
         select $1, x.ts, x.seq, x.seq, x.v, x.i, x.o from jsonb_to_recordset($2::jsonb) as x(ts bigint, seq bigint, v numeric, i numeric, o numeric)`,
        [vault, JSON.stringify(points.map((p, seq) => ({ ...p, seq })))],
      );
      return growth;
    }

    it('are null with 29 daily returns and equal an independent computation with 30', async () => {
      await pool.query(
        `insert into strategies (id, name, updated_at) values ('s29', 'twenty-nine', 0), ('s30', 'thirty', 0)`,
      );
      await seed(`0x${'29'.repeat(20)}`, 's29', 29);
      const growth = await seed(`0x${'30'.repeat(20)}`, 's30', 30);
      const stats = await refreshStrategyStats(pool, 30);
      const s29 = stats.find((s) => s.id === 's29')!;
      const s30 = stats.find((s) => s.id === 's30')!;
      expect(s29).toEqual({ id: 's29', liveApr: null, sigma: null, historyDays: 29 });

      // Independent: flows removed, each day's return is exactly its growth factor.
      const chained = growth.reduce((g, r) => g * (1 + r), 1) - 1;
      const mean = growth.reduce((a, r) => a + r, 0) / growth.length;
      const sd = Math.sqrt(growth.reduce((a, r) => a + (r - mean) ** 2, 0) / (growth.length - 1));
      expect(s30.historyDays).toBe(30);
      expect(s30.liveApr).toBeCloseTo((chained * 365) / 30, 9);
      expect(s30.sigma).toBeCloseTo(sd * Math.sqrt(365), 9);

      const { rows } = await pool.query(
        `select id, live_apr, sigma from strategies where id in ('s29', 's30') order by id`,
      );
      expect(rows[0]).toEqual({ id: 's29', live_apr: null, sigma: null });
      expect(rows[1].live_apr).toBeCloseTo(s30.liveApr!, 12);
    });
  });
});
