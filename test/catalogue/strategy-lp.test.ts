import { createLogger } from '@vault-yield/common';
import {
  type Address,
  aggregateDailyReturns,
  type DailyReturn,
  dailyReturnsByStrategy,
  encodeBinaryRecord,
  figuresByStrategy,
  foldRecord,
  getAmountsForLiquidity,
  getLiquidityForAmounts,
  getSqrtRatioAtTick,
  type StrategyLp,
  type StrategyLpFigures,
  shownState,
  strategyLpFigures,
  type VaultRecord,
  type VaultState,
} from '@vault-yield/domain';
import type { LogBatch } from '@vault-yield/log';
import { applyBatch, type Decoded, decode, refreshStrategyFigures } from '@vault-yield/projector';
import {
  createPgPool,
  createProjectionStore,
  type Pool,
  strategyList,
  vaultFoldExtents,
  vaultReturnSeries,
  vaultStrategyLp,
} from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  ARB,
  eth,
  History,
  OWNER,
  oneBlock,
  POOL,
  TICK_2000,
  USDC,
  usdc,
  VAULT,
  WETH,
} from '@vault-yield/test-kit/domain';
import { startReader, type TestReader } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The LP figures per strategy in the catalogue (issue #46 item 8), through the projector and the
 * stats refresh on real Postgres, served by the reader: two vaults run strategy lp-a, then one
 * switches to lp-b; a third runs lp-c, a hand-made history whose figures are known without the
 * fold (10 USD of fees over a known ∫V dt). Each strategy's figures equal the domain function over
 * the vaults' byStrategy entries (as the fold in process makes them) and the strategy's daily
 * returns read from every point; all null while liveApr is (fewer daily returns than the
 * minimum); the same whatever the batches; a vault whose state has no LP figures adds nothing.
 */

const DAY = 86_400_000;
const YEAR = 365 * DAY;
const log = createLogger({ name: 'strategy-lp', level: 'silent' });
const A = VAULT;
const B = `0x${'bb'.repeat(20)}` as Address;
const C = `0x${'cc'.repeat(20)}` as Address;

/** Three vaults' histories on one chain: every record a block of its own, blocks in time order. */
function histories() {
  const clock = { block: 100, ts: Date.UTC(2026, 0, 1, 0, 30) / 1000 };
  const hs = new Map<Address, History>([
    [A, new History()],
    [B, new History()],
    [C, new History()],
  ]);
  const records: VaultRecord[] = [];
  const on = (vault: Address, build: (h: History) => VaultRecord) => {
    const h = hs.get(vault)!;
    h.block = clock.block;
    h.ts = clock.ts;
    const r = build(h);
    clock.block = h.block;
    clock.ts = h.ts;
    records.push(vault === VAULT ? r : ({ ...r, vault } as VaultRecord));
    return r;
  };
  const created = (vault: Address, strategy: string) =>
    on(vault, (h) =>
      h.record('vault.created', { owner: OWNER, strategy, token0: WETH, token1: USDC, pool: POOL }),
    );
  /** Opens position '1' on [lower, upper) with what idle holds (shares of it), at the current tick. */
  const open = (vault: Address, lower: number, upper: number, amount0: bigint, amount1: bigint) =>
    on(vault, (h) => {
      const sp = getSqrtRatioAtTick(h.market.tick);
      const [sa, sb] = [getSqrtRatioAtTick(lower), getSqrtRatioAtTick(upper)];
      const l = getLiquidityForAmounts(sp, sa, sb, amount0, amount1);
      const a = getAmountsForLiquidity(sp, sa, sb, l);
      return h.record('position.opened', {
        positionId: '1',
        pool: POOL,
        tickLower: lower,
        tickUpper: upper,
        liquidity: l.toString(),
        amount0: a.amount0.toString(),
        amount1: a.amount1.toString(),
      });
    });
  /** Moves position '1' to a range centred on the current tick, with what came out of the old one. */
  const rebalance = (vault: Address, half: number) =>
    on(vault, (h) => {
      const p = h.held.positions['1']!;
      const sp = getSqrtRatioAtTick(h.market.tick);
      const out = getAmountsForLiquidity(
        sp,
        getSqrtRatioAtTick(p.tickLower),
        getSqrtRatioAtTick(p.tickUpper),
        p.liquidity,
      );
      const [lower, upper] = [h.market.tick - half, h.market.tick + half];
      const [sa, sb] = [getSqrtRatioAtTick(lower), getSqrtRatioAtTick(upper)];
      const l = getLiquidityForAmounts(sp, sa, sb, out.amount0, out.amount1);
      const into = getAmountsForLiquidity(sp, sa, sb, l);
      return h.record('position.rebalanced', {
        positionId: '1',
        tickLower: lower,
        tickUpper: upper,
        liquidity: l.toString(),
        amount0Out: out.amount0.toString(),
        amount1Out: out.amount1.toString(),
        amount0In: into.amount0.toString(),
        amount1In: into.amount1.toString(),
      });
    });

  created(A, 'lp-a');
  on(A, (h) => h.deposit(WETH, eth(1)));
  on(A, (h) => h.deposit(USDC, usdc(2000)));
  open(A, TICK_2000 - 600, TICK_2000 + 600, eth(0.5), usdc(1000));
  created(B, 'lp-a');
  on(B, (h) => h.deposit(WETH, eth(0.5)));
  on(B, (h) => h.deposit(USDC, usdc(1000)));
  open(B, TICK_2000 - 300, TICK_2000 + 300, eth(0.4), usdc(800));
  // C: 1,000 USDC, all in a position below the price (all USDC, out of range): worth 1,000 USD
  // exactly until 10 USDC of fees appear on day 5, 1,010 after.
  created(C, 'lp-c');
  const cDeposit = on(C, (h) => h.deposit(USDC, usdc(1000)));
  open(C, TICK_2000 - 1200, TICK_2000 - 600, 0n, usdc(1000));
  const cEnds: { ts: number; valueUsd: number }[] = [{ ts: cDeposit.blockTimestamp * 1000, valueUsd: 1000 }];

  for (let d = 1; d <= 40; d++) {
    clock.ts += DAY / 1000;
    // The price leaves both ranges on days 10–13 (WETH up ≈ 7 %), and comes back.
    const away = d >= 10 && d < 14;
    const market = away
      ? { tick: TICK_2000 + 700, weth: (2000 * 1.0001 ** 700).toFixed(8) }
      : { tick: TICK_2000, weth: '2000' };
    for (const vault of [A, B]) {
      const h = hs.get(vault)!;
      if (h.held.positions['1']) h.accrueFees('1', eth(0.0004 * (1 + (d % 3))), usdc(0.7 * (1 + (d % 4))));
      if (d % 7 === 3)
        on(vault, (x) => x.record('rewards.accrued', { rewardToken: ARB, amount: eth(2).toString() }));
      on(vault, (x) => x.mark(market));
    }
    if (d === 25) on(B, (h) => h.record('strategy.selected', { strategy: 'lp-b' }));
    if (d === 30 || d === 34) {
      // A rebalance and a mark in one block (the rebalance not last in it): a batch may end between.
      rebalance(B, 240);
      on(B, (h) => h.mark());
      records.push(...oneBlock(records.splice(-2)));
    }
    if (d === 36) rebalance(A, 600);
    if (d === 5) hs.get(C)!.accrueFees('1', 0n, usdc(10));
    const mark = on(C, (h) => h.mark());
    cEnds.push({ ts: mark.blockTimestamp * 1000, valueUsd: d >= 5 ? 1010 : 1000 });
  }
  return { records, cEnds };
}

/** `records[from, to)` as one batch of partition 0, offsets their indexes. */
function batchOf(records: readonly VaultRecord[], from: number, to: number): LogBatch<Decoded> {
  return {
    topic: 't',
    partition: 0,
    messages: records.slice(from, to).map((r, i) => {
      const value = encodeBinaryRecord(r);
      return {
        partition: 0,
        offset: String(from + i),
        key: null,
        value,
        timestamp: 0,
        decoded: decode(value),
      };
    }),
    commit: { groupId: 'g', topic: 't', partition: 0, nextOffset: String(to) },
    highWatermark: String(records.length),
  };
}

async function apply(pool: Pool, records: readonly VaultRecord[], from: number, to: number, size: number) {
  const store = createProjectionStore(pool);
  for (let at = from; at < to; at += size) {
    const end = Math.min(to, at + size);
    const r = await store.transaction((tx) => applyBatch(tx, batchOf(records, at, end), log));
    expect(r.kind).toBe('applied');
  }
}

/** Each vault's state as the fold in process leaves it after `records`. */
function foldedStates(records: readonly VaultRecord[]): Map<string, VaultState> {
  const states = new Map<string, VaultState>();
  for (const r of records) states.set(r.vault, foldRecord(states.get(r.vault), r));
  return states;
}

/** By strategy, every vault's byStrategy entry for it (vaults in address order, as stored). */
function entriesOf(states: ReadonlyMap<string, VaultState>): Map<string, StrategyLp[]> {
  const out = new Map<string, StrategyLp[]>();
  for (const vault of [...states.keys()].sort()) {
    const by = figuresByStrategy(states.get(vault)!);
    for (const [strategy, e] of Object.entries(by)) out.set(strategy, [...(out.get(strategy) ?? []), e]);
  }
  return out;
}

/** Each strategy's daily returns from every stored point, each vault up to its fold extent (the definition). */
async function dailyFromEveryPoint(pool: Pool): Promise<Map<string, number[]>> {
  const extents = await vaultFoldExtents(pool);
  const members = new Map<string, DailyReturn[][]>();
  for (const [vault, points] of await vaultReturnSeries(pool)) {
    const asOf = extents.get(vault);
    if (asOf === undefined) continue;
    for (const [strategy, days] of dailyReturnsByStrategy(points, { asOf }))
      members.set(strategy, [...(members.get(strategy) ?? []), days]);
  }
  return new Map([...members].map(([s, series]) => [s, aggregateDailyReturns(series).map((d) => d.r)]));
}

const storedLp = async (pool: Pool) =>
  new Map((await strategyList(pool)).map((s) => [s.id, { liveApr: s.liveApr, lp: s.lp }]));

const ALL_NULL: StrategyLpFigures = {
  feeApr: null,
  rewardApr: null,
  timeInRange: null,
  rebalancesPerWeek: null,
  divergenceApr: null,
  maxDrawdown: null,
};

describe('LP figures per strategy (Postgres, projector, reader)', () => {
  const { records, cEnds } = histories();
  const half = records.findIndex((r) => r.blockTimestamp * 1000 >= Date.UTC(2026, 0, 21));
  const dbs: TestDatabase[] = [];
  const pools: Pool[] = [];
  let reader: TestReader | undefined;

  const database = async (label: string) => {
    const db = await createTestDatabase(label);
    dbs.push(db);
    const pool = createPgPool({
      url: db.writerUrl,
      schema: db.schema,
      applicationName: 'strategy-lp',
      max: 2,
    });
    pools.push(pool);
    await pool.query(
      `insert into strategies (id, name, updated_at) values ('lp-a', 'A', 0), ('lp-b', 'B', 0), ('lp-c', 'C', 0)`,
    );
    return { db, pool };
  };
  let whole: { db: TestDatabase; pool: Pool };

  beforeAll(async () => {
    whole = await database('strategy_lp');
  });
  afterAll(async () => {
    await reader?.stop();
    await Promise.all(pools.map((p) => p.end()));
    await Promise.all(dbs.map((d) => d.drop()));
  });

  /** What the domain function gives over the fold's entries and every point's daily returns. */
  async function expected(pool: Pool, upTo: number, min: number, without: ReadonlySet<string> = new Set()) {
    const states = foldedStates(records.slice(0, upTo).filter((r) => !without.has(r.vault)));
    const entries = entriesOf(states);
    const daily = await dailyFromEveryPoint(pool);
    return new Map(
      ['lp-a', 'lp-b', 'lp-c'].map((id) => [
        id,
        strategyLpFigures(entries.get(id) ?? [], daily.get(id) ?? [], { minDailyReturns: min }),
      ]),
    );
  }

  it('null with fewer daily returns than the minimum, though the vaults have LP figures', async () => {
    expect(half).toBeGreaterThan(0);
    await apply(whole.pool, records, 0, half, records.length);
    const figures = await refreshStrategyFigures(whole.pool, 30);
    for (const f of figures) {
      expect(f.liveApr).toBeNull();
      expect(f.lp).toEqual(ALL_NULL);
    }
    // The sums are there (read from the vault rows), the history is not.
    const members = await vaultStrategyLp(whole.pool);
    expect(members.get('lp-a')).toHaveLength(2);
    expect(members.get('lp-a')!.every((e) => e.feesUsd > 0n && e.capitalMs > 0n)).toBe(true);
    for (const [, s] of await storedLp(whole.pool)) expect(s.lp).toEqual(ALL_NULL);
    // With a lower minimum, the same history has figures.
    const low = new Map((await refreshStrategyFigures(whole.pool, 5)).map((f) => [f.id, f.lp]));
    expect(low.get('lp-a')!.feeApr).toBeGreaterThan(0);
    expect(low).toEqual(await expected(whole.pool, half, 5));
  });

  it('two vaults run lp-a, one switches to lp-b: each strategy the domain function over the byStrategy entries', async () => {
    await apply(whole.pool, records, half, records.length, records.length);
    // The stored states' entries are the fold's.
    const stored = await vaultStrategyLp(whole.pool);
    expect(stored).toEqual(entriesOf(foldedStates(records)));
    expect(stored.get('lp-a')).toHaveLength(2);
    expect(stored.get('lp-b')).toHaveLength(1);

    const at30 = new Map((await refreshStrategyFigures(whole.pool, 30)).map((f) => [f.id, f]));
    const want30 = await expected(whole.pool, records.length, 30);
    expect(at30.get('lp-a')!.liveApr).not.toBeNull();
    expect(at30.get('lp-b')!.historyDays).toBeLessThan(30); // 15 days under lp-b
    expect(at30.get('lp-b')!.lp).toEqual(ALL_NULL);
    for (const id of ['lp-a', 'lp-b', 'lp-c']) expect(at30.get(id)!.lp).toEqual(want30.get(id));

    const at10 = new Map((await refreshStrategyFigures(whole.pool, 10)).map((f) => [f.id, f.lp]));
    expect(at10).toEqual(await expected(whole.pool, records.length, 10));
    const a = at10.get('lp-a')!;
    const b = at10.get('lp-b')!;
    // Every figure moved: fees and rewards earned, time out of range (days 10–13), rebalances of
    // A (under lp-a) and B (under lp-b only: it switched before), divergence realised by them.
    for (const f of [a, b]) {
      expect(f.feeApr).toBeGreaterThan(0);
      expect(f.timeInRange).toBeGreaterThan(0);
      expect(f.rebalancesPerWeek).toBeGreaterThan(0);
      expect(f.divergenceApr).not.toBeNull();
      expect(f.maxDrawdown).toBeGreaterThanOrEqual(0);
    }
    expect(a.rewardApr).toBeGreaterThan(0);
    expect(a.timeInRange).toBeLessThan(1);
    expect(a.maxDrawdown).toBeGreaterThan(0); // WETH's move out of range and back
    expect(b.timeInRange).toBe(1); // under lp-b the price never left B's ranges
    expect(b.rebalancesPerWeek).toBeCloseTo((2 * 7) / 15, 1); // 2 rebalances in ≈ 15 days

    // The stored row is what was computed, and the reader serves it (its OpenAPI schema checked).
    const rows = await storedLp(whole.pool);
    for (const [id, f] of at10) expect(rows.get(id)!.lp).toEqual(f);
    reader = await startReader(whole.db);
    const res = await reader.get('/v1/strategies');
    expect(res.status).toBe(200);
    const served = new Map((res.body as { id: string; lp: StrategyLpFigures }[]).map((s) => [s.id, s.lp]));
    expect(served).toEqual(at10);
  });

  it('lp-c by hand: 10 USD of fees over a known ∫V dt, out of range all along, no drawdown', async () => {
    const c = new Map((await refreshStrategyFigures(whole.pool, 10)).map((f) => [f.id, f.lp])).get('lp-c')!;
    // ∫V dt over C's block ends (its value at each end × the time to the next), USD · ms.
    let capital = 0;
    for (let i = 0; i + 1 < cEnds.length; i++)
      capital += cEnds[i]!.valueUsd * (cEnds[i + 1]!.ts - cEnds[i]!.ts);
    expect(c.feeApr).toBeCloseTo((10 * YEAR) / capital, 6);
    expect(c.feeApr).toBeCloseTo((10 / 1010) * (365 / 40), 2); // ≈ 10 USD a 40-day year-fraction on ≈ 1,000
    expect(c).toMatchObject({
      rewardApr: 0,
      timeInRange: 0,
      rebalancesPerWeek: 0,
      divergenceApr: 0,
      maxDrawdown: 0,
    });
  });

  it('the same figures whatever the batches cut the log; inside a block, the block end before it', async () => {
    const cut = await database('strategy_lp_cut');
    // Up to B's first rebalance, which is not the last record of its block: the stored state is
    // inside the block, and its snapshot (and these sums) stand at B's previous block end.
    const inside = records.findIndex((r) => r.type === 'position.rebalanced' && !r.lastInBlock) + 1;
    expect(inside).toBeGreaterThan(half);
    await apply(cut.pool, records, 0, inside, 4);
    const states = foldedStates(records.slice(0, inside));
    expect(states.get(B)!.blockStart).toBeDefined();
    const shown = new Map([...states].map(([v, st]) => [v, shownState(st)]));
    expect(await vaultStrategyLp(cut.pool)).toEqual(entriesOf(shown));
    expect(entriesOf(shown).get('lp-b')).not.toEqual(entriesOf(states).get('lp-b')); // the rebalance is not in it yet
    await apply(cut.pool, records, inside, records.length, 4);
    await refreshStrategyFigures(cut.pool, 10);
    expect(await storedLp(cut.pool)).toEqual(await storedLp(whole.pool));
  });

  it('a vault whose state has no LP figures (folded before fold version 5) adds nothing', async () => {
    // B's stored state as fold version 4 wrote it: no lp. Its daily returns still count.
    await whole.pool.query(`update vault_snapshot set state = (state::jsonb - 'lp')::json where vault = $1`, [
      B,
    ]);
    const figures = new Map((await refreshStrategyFigures(whole.pool, 10)).map((f) => [f.id, f]));
    const want = await expected(whole.pool, records.length, 10, new Set([B]));
    for (const id of ['lp-a', 'lp-b', 'lp-c']) expect(figures.get(id)!.lp).toEqual(want.get(id));
    // lp-b had B alone: only the drawdown of its daily returns is left.
    expect(figures.get('lp-b')!.liveApr).not.toBeNull();
    expect(figures.get('lp-b')!.lp).toEqual({ ...ALL_NULL, maxDrawdown: want.get('lp-b')!.maxDrawdown });
    expect(figures.get('lp-b')!.lp.maxDrawdown).not.toBeNull();
  });
});
