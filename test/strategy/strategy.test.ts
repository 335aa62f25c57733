import { createLogger } from '@vault-yield/common';
import { createPublisher } from '@vault-yield/log';
import { createStrategyProjector, refreshStrategyStats } from '@vault-yield/projector';
import { createPgPool, foldExtent, hexToBytes, type Pool } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { makeCatalogue, makeScreen } from '@vault-yield/test-kit/screen';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const until = async (check: () => Promise<boolean>, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 200));
  }
};

describe('strategy projector (screen + catalogue topics)', () => {
  let db: TestDatabase;
  let pool: Pool;
  const screenTopic = uniqueTopic('screen');
  const catalogueTopic = uniqueTopic('catalogue');
  const log = createLogger({ name: 'test', level: 'warn' });
  const projector = () =>
    createStrategyProjector({
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

      // A newer screen re-ranks: the strategy's pairs follow it, in the pool's orientation (token0 =
      // the lower address: USDC 0x…02 before WBTC 0x…03), as /v1/universe/pairs shows the same pair —
      // the screen named it WBTC/USDC (#43 item 7).
      await publish(screenTopic, [makeScreen('c', 3000, 1)]);
      await until(async () => (await version()) === 'c');
      const after = await pool.query(`select pairs from strategies where id = 'steady-eth'`);
      expect(after.rows[0].pairs).toEqual([{ a: 'USDC', b: 'WBTC', venues: ['uniswap-v3'] }]);
      const universe = await pool.query(`select a, b from universe_pairs where token_b = $1`, [
        '0x0000000000000000000000000000000000000003',
      ]);
      expect(universe.rows).toEqual([{ a: 'USDC', b: 'WBTC' }]);
    } finally {
      await p.stop();
    }
  });

  it('a restarted projector resumes from its stored offsets: nothing re-read, nothing skipped', async () => {
    // Published while no projector runs: a restart must pick it up (not start at the log's end).
    await publish(screenTopic, [makeScreen('d', 4000, 0)]);
    // The poison message (offset 2) is dead-lettered once; forget it, so a restart that re-read
    // the topic from the start would write it again.
    await pool.query('delete from dead_letters');
    // A fresh Kafka group: no offsets committed to Kafka, so only those stored in Postgres (with
    // the rows) can place the restarted consumer. Its log shows what it read.
    const lines: { offset?: string; outcome?: string; msg?: string }[] = [];
    const captured = createLogger({
      name: 'test',
      level: 'info',
      destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
    });
    const p = createStrategyProjector({
      brokers: kafkaBrokers(),
      pool,
      logger: captured,
      screenTopic,
      catalogueTopic,
      groupId: 'market-test',
      kafkaGroupSuffix: 'restart',
      statsIntervalMs: 0,
      minDailyReturns: 30,
    });
    await p.start();
    try {
      await until(async () => (await version()) === 'd');
      // Everything before 'd' sits before it in the one partition: a re-read would have passed it.
      expect((await pool.query('select count(*)::int as n from dead_letters')).rows[0].n).toBe(0);
      const offsets = await pool.query(
        `select next_offset::int as n from consumer_offsets where group_id = 'market-test-screen'`,
      );
      expect(offsets.rows).toEqual([{ n: 6 }]);
      // It was placed at the stored offset (not at 0, leaving the per-message check to skip the rest).
      const screens = lines.filter((l) => l.msg === 'market message projected' && l.offset !== undefined);
      expect(screens.map((l) => [l.offset, l.outcome])).toContainEqual(['5', 'applied']);
      expect(screens.filter((l) => l.outcome === 'skipped')).toEqual([]);
    } finally {
      await p.stop();
    }
  });

  describe('liveApr and sigma', () => {
    const DAY = 86_400_000;
    const t0 = Date.UTC(2026, 0, 1, 12);

    /** A vault history: daily growth g_d, a deposit on day 10 and a withdrawal on day 20. */
    function history(days: number, amp = 1) {
      const points: { ts: number; v: number; i: number; o: number; x: number }[] = [
        { ts: t0, v: 1000, i: 1000, o: 0, x: 1 },
      ];
      let x = 1;
      let v = 1000;
      let cin = 1000;
      let cout = 0;
      const growth: number[] = [];
      for (let d = 1; d <= days; d++) {
        const g = amp * 0.001 * ((d % 7) - 3); // −0.3 % … +0.3 %
        growth.push(g);
        x *= 1 + g; // the fold's return index: flows removed
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
        points.push({ ts: t0 + d * DAY, v, i: cin, o: cout, x });
      }
      return { points, growth };
    }

    /**
     * `strategy` is the vault's current one; its points ran under `ranUnder` (default the same).
     * The vault's last folded record is its last point: how far the fold stands is in the rows.
     */
    async function seed(vault: string, strategy: string, days: number, ranUnder = strategy, amp = 1) {
      const { points, growth } = history(days, amp);
      await pool.query(
        `insert into vault_snapshot (vault, chain_id, owner, strategy, status, snapshot, state, last_record_id, records_applied, created_at, updated_at)
         values ($1, 31337, $1, $2, 'earning', '{}', '{}', 'x', $3, $4, $5)`,
        [vault, strategy, points.length, t0, points.at(-1)!.ts],
      );
      await pool.query(
        `insert into equity_points (chain_id, vault, ts, block_number, seq, value_usd, capital_in_usd, capital_out_usd, strategy, return_index)
         select 31337, ${hexToBytes('$1::text')}, x.ts, x.seq, x.seq, x.v, x.i, x.o, $3, x.x
         from jsonb_to_recordset($2::jsonb) as x(ts bigint, seq bigint, v numeric, i numeric, o numeric, x numeric)`,
        [vault, JSON.stringify(points.map((p, seq) => ({ ...p, seq }))), ranUnder],
      );
      return growth;
    }

    it('are null with 29 daily returns and equal an independent computation with 30', async () => {
      await pool.query(
        `insert into strategies (id, name, updated_at) values ('s29', 'twenty-nine', 0), ('s30', 'thirty', 0)`,
      );
      // No vault folded: nothing to be as of, so no figures at all.
      for (const s of await refreshStrategyStats(pool, 30))
        expect(s).toEqual({ id: s.id, liveApr: null, sigma: null, historyDays: 0 });
      await seed(`0x${'29'.repeat(20)}`, 's29', 29);
      const s30Vault = `0x${'30'.repeat(20)}`;
      const growth = await seed(s30Vault, 's30', 30);
      // A vault that runs s30 now but earned its whole (different) history under another
      // strategy: its sub-periods count for that one, never for s30 (they used to move along).
      await seed(`0x${'31'.repeat(20)}`, 's30', 12, 's-old', 5);
      // The fold stands at the s30 vault's last record, midday of the 30th day: 29 complete days,
      // the s29 vault's last return included; the s30 vault's 30th return ends in the day still in
      // progress and is not counted yet.
      expect(await foldExtent(pool)).toBe(t0 + 30 * DAY);
      const early = await refreshStrategyStats(pool, 30);
      const s29 = early.find((s) => s.id === 's29')!;
      expect(s29).toEqual({ id: 's29', liveApr: null, sigma: null, historyDays: 29 });
      expect(early.find((s) => s.id === 's30')).toEqual({
        id: 's30',
        liveApr: null,
        sigma: null,
        historyDays: 29,
      });
      const { rows: nulls } = await pool.query(`select live_apr, sigma from strategies where id = 's29'`);
      expect(nulls[0]).toEqual({ live_apr: null, sigma: null });
      // The fold moves past the end of that day: a record of the s30 vault at the next midnight
      // that moved neither value nor flows (no equity point), so the 30th day has ended.
      await pool.query('update vault_snapshot set updated_at = $2 where vault = $1', [
        s30Vault,
        t0 + 30 * DAY + DAY / 2,
      ]);
      const stats = await refreshStrategyStats(pool, 30);
      const s30 = stats.find((s) => s.id === 's30')!;

      // Independent: flows removed, each day's return is exactly its growth factor.
      const chained = growth.reduce((g, r) => g * (1 + r), 1) - 1;
      const mean = growth.reduce((a, r) => a + r, 0) / growth.length;
      const sd = Math.sqrt(growth.reduce((a, r) => a + (r - mean) ** 2, 0) / (growth.length - 1));
      expect(s30.historyDays).toBe(30);
      expect(s30.liveApr).toBeCloseTo((chained * 365) / 30, 9);
      expect(s30.sigma).toBeCloseTo(sd * Math.sqrt(365), 9);

      const { rows } = await pool.query(`select id, live_apr, sigma from strategies where id = 's30'`);
      expect(rows[0].live_apr).toBeCloseTo(s30.liveApr!, 12);
    });

    it('the same stored log gives the same figures whatever the wall clock', async () => {
      // On the log stored above; figures from 2 daily returns, so every strategy has numbers.
      const logTime = (await foldExtent(pool))!;
      expect(logTime).toBeGreaterThan(0);
      const at = async (wallClock: number) => {
        vi.useFakeTimers({ toFake: ['Date'] }); // Date only: the pool's own timers run as ever
        try {
          vi.setSystemTime(wallClock);
          const stats = await refreshStrategyStats(pool, 2);
          const { rows } = await pool.query(
            `select id, live_apr, sigma, history_days from strategies order by id`,
          );
          return { stats, rows };
        } finally {
          vi.useRealTimers();
        }
      };
      const inTime = await at(logTime);
      expect(inTime.stats.find((s) => s.id === 's30')!.liveApr).not.toBeNull();
      expect(inTime.stats.find((s) => s.id === 's-old')).toBeUndefined(); // no catalogue entry
      // A projector 60 days behind the chain (backfill, lag, a rebuild of an old log), and a
      // chain clock 60 days behind the wall clock… or ahead of it (the local demo advances it).
      expect(await at(logTime + 60 * DAY)).toEqual(inTime);
      expect(await at(logTime - 60 * DAY)).toEqual(inTime);
    });
  });
});
