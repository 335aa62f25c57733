import {
  aggregateDailyReturns,
  type DailyReturn,
  type DayCarry,
  type DayCell,
  type EquitySample,
  refOf,
  rollDays,
  splitVaultIds,
  utcDay,
  vaultId,
} from '@vault-yield/domain';
import { bytesToHex, hexToBytes, type Pool, type PoolClient, withTransaction } from '../pool/index.js';

const DAY_MS = 86_400_000;
/** Vaults whose new points one statement reads, and days at most (bound a first fill's memory). */
const VAULTS_PER_READ = 100;
const DAYS_PER_READ = 31;

/** What one refresh of the daily rollups did, and the strategies' daily returns it leaves. */
export interface DailyRollup {
  /** Each strategy's daily returns (its members' weighted by value), ascending by day. */
  strategies: Map<string, number[]>;
  /** Vaults that rolled at least one day forward. */
  vaults: number;
  /** Equity points read (each is read once, when its day completes). */
  points: number;
  /** Days whose strategy returns were aggregated again. */
  days: number;
  /** Vaults rolled again from their first point because their points were rewritten (re-folds). */
  redone: number;
}

/**
 * Rolls every vault's daily returns forward to its last complete day and returns each strategy's
 * daily returns — the figures of `strategiesStats` over every point, read from daily rollups
 * (migration 0027): a vault's points are read once, when their day completes (`rollDays`), the
 * strategies' days are aggregated again only where a vault's cells changed, and a refresh then
 * reads one row per strategy and day. A vault whose points were deleted (a re-fold rewrites them;
 * the `equity_points_deleted` trigger notes it) is rolled again from its first point.
 *
 * Vaults are keyed by vault id (`eip155:{chainId}:{address}`), their rows by (chain_id, vault):
 * the same address on two chains is two vaults.
 *
 * `extents`: how far each vault has been folded (`vaultFoldExtents`, read before this so every
 * point by then is visible). A vault with a rollup but no extent counts to the latest extent.
 * One repeatable-read transaction under an advisory lock per schema: two refreshes never
 * interleave, and a re-fold committed meanwhile is seen at the next refresh (or fails this one's
 * write of the note it read: retried).
 */
export async function rollStrategyDays(
  pool: Pool,
  extents: ReadonlyMap<string, number>,
): Promise<DailyRollup> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await withTransaction(pool, (c) => roll(c, extents), 'begin isolation level repeatable read');
    } catch (err) {
      // 40001: a re-fold noted a vault again while this refresh redid it; roll again from it.
      if ((err as { code?: unknown }).code !== '40001' || attempt >= 3) throw err;
    }
  }
}

/** A stored point with its place in the fold order (ts, seq): a carry remembers where it read to. */
type Point = EquitySample & { seq: string };

async function roll(c: PoolClient, extents: ReadonlyMap<string, number>): Promise<DailyRollup> {
  await c.query(`select pg_advisory_xact_lock(hashtext('vault-yield-stats:' || current_schema()))`);
  const touched = new Set<number>();
  /** Drops vaults' rollups: they roll again from their first point. */
  const redo = async (ids: readonly string[]) => {
    if (ids.length === 0) return;
    const { chainIds, vaults } = splitVaultIds(ids);
    const keys = `(chain_id, vault) in (select c, ${hexToBytes('v')} from unnest($1::int[], $2::text[]) as k(c, v))`;
    const { rows: gone } = await c.query<{ day: number }>(
      `delete from vault_days where ${keys} returning day`,
      [chainIds, vaults],
    );
    for (const g of gone) touched.add(g.day);
    await c.query(`delete from vault_days_carry where ${keys}`, [chainIds, vaults]);
  };

  // Vaults whose points were deleted (a re-fold rewrote them).
  const { rows: stale } = await c.query<{ chain_id: number; vault: string; from_ts: string }>(
    `select chain_id, ${bytesToHex('vault')} as vault, from_ts::text from vault_days_stale`,
  );
  await c.query(
    `delete from vault_days_stale s using unnest($1::int[], $2::text[], $3::bigint[]) as t(c, v, f)
     where s.chain_id = t.c and s.vault = ${hexToBytes('t.v')} and s.from_ts = t.f`,
    [stale.map((r) => r.chain_id), stale.map((r) => r.vault), stale.map((r) => r.from_ts)],
  );
  const carries = await readCarries(c);
  const redone = new Set<string>(stale.map((r) => vaultId(r.chain_id, r.vault)));

  let latest = 0;
  for (const at of extents.values()) if (at > latest) latest = at;
  const plans: { vault: string; carry: DayCarry<Point> | null; lastDay: number }[] = [];
  const plan = (vault: string, asOf: number) => {
    const lastDay = Math.floor(asOf / DAY_MS) - 1;
    // A vault folded less far than its rollup (held at a gap since): its days after its extent
    // do not exist any more — roll it again to where it stands.
    if ((carries.get(vault)?.nextDay ?? Number.NEGATIVE_INFINITY) > lastDay + 1) redone.add(vault);
    const carry = redone.has(vault) ? null : (carries.get(vault) ?? null);
    if (!carry || carry.nextDay <= lastDay) plans.push({ vault, carry, lastDay });
  };
  for (const [vault, asOf] of extents) plan(vault, asOf);
  for (const vault of carries.keys()) if (!extents.has(vault)) plan(vault, latest);
  // Stale vaults without an extent or a rollup (their snapshot gone too) keep nothing.
  await redo([...redone]);

  let points = 0;
  const rolled = new Set<string>();
  type Plan = { vault: string; carry: DayCarry<Point> | null; lastDay: number };
  /**
   * Rolls each vault of `chunk` forward at most DAYS_PER_READ days (its points of those days in one
   * read): the vaults that have further to go, and those found late (a point folded after its day
   * was rolled: a vault released from a gap, or its records arriving late), whose rollup is dropped.
   */
  const rollChunk = async (chunk: readonly Plan[]): Promise<{ further: Plan[]; late: Plan[] }> => {
    const firsts = await firstDays(
      c,
      chunk.filter((p) => !p.carry).map((p) => p.vault),
    );
    const pass = chunk.flatMap((p) => {
      const start = p.carry ? p.carry.nextDay : firsts.get(p.vault);
      if (start === undefined) return [];
      return [{ ...p, upTo: Math.min(p.lastDay, start + DAYS_PER_READ - 1) }];
    });
    const series = await pointsAfter(
      c,
      pass.map((p) => ({ vault: p.vault, after: p.carry?.last ?? null, to: (p.upTo + 1) * DAY_MS })),
    );
    const cells: { vault: string; cell: DayCell }[] = [];
    const moved: { vault: string; carry: DayCarry<Point> }[] = [];
    const further: Plan[] = [];
    const late: Plan[] = [];
    for (const p of pass) {
      const pts = series.get(p.vault) ?? [];
      points += pts.length;
      if (p.carry && pts.length > 0 && pts[0]!.ts < p.carry.nextDay * DAY_MS) {
        late.push({ vault: p.vault, carry: null, lastDay: p.lastDay });
        continue;
      }
      const r = rollDays(p.carry, pts, p.upTo);
      for (const cell of r.cells) {
        cells.push({ vault: p.vault, cell });
        touched.add(cell.day);
      }
      if (r.carry && r.carry !== p.carry) {
        moved.push({ vault: p.vault, carry: r.carry });
        rolled.add(p.vault);
      }
      if (p.upTo < p.lastDay) further.push({ vault: p.vault, carry: r.carry, lastDay: p.lastDay });
    }
    await writeCells(c, cells);
    await writeCarries(c, moved);
    return { further, late };
  };
  // A first fill (an upgraded schema, a re-fold) reads a vault's history a month at a time, so
  // memory holds VAULTS_PER_READ vaults' month, never every point.
  let queue: Plan[] = plans;
  while (queue.length > 0) {
    const next: Plan[] = [];
    for (let i = 0; i < queue.length; i += VAULTS_PER_READ) {
      const { further, late } = await rollChunk(queue.slice(i, i + VAULTS_PER_READ));
      await redo(late.map((p) => p.vault));
      for (const p of late) redone.add(p.vault);
      next.push(...further, ...late);
    }
    queue = next;
  }

  if (touched.size > 0) await aggregateDays(c, [...touched]);
  const { rows } = await c.query<{ strategy: string; r: number }>(
    'select strategy, r from strategy_days order by strategy, day',
  );
  const strategies = new Map<string, number[]>();
  for (const row of rows) {
    let list = strategies.get(row.strategy);
    if (!list) {
      list = [];
      strategies.set(row.strategy, list);
    }
    list.push(row.r);
  }
  return { strategies, vaults: rolled.size, points, days: touched.size, redone: redone.size };
}

/** The day of each vault's first point (by vault id; an index probe each); vaults without points are absent. */
async function firstDays(c: PoolClient, ids: readonly string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const { chainIds, vaults } = splitVaultIds(ids);
  const { rows } = await c.query<{ chain_id: number; vault: string; day: number }>(
    `select q.c as chain_id, q.v as vault, (f.ts / ${DAY_MS})::int as day
     from unnest($1::int[], $2::text[]) as q(c, v)
     cross join lateral (select ts from equity_points where chain_id = q.c and vault = ${hexToBytes('q.v')}
                         order by ts, seq limit 1) f`,
    [chainIds, vaults],
  );
  return new Map(rows.map((r) => [vaultId(r.chain_id, r.vault), r.day]));
}

async function readCarries(c: PoolClient): Promise<Map<string, DayCarry<Point>>> {
  const { rows } = await c.query<{
    chain_id: number;
    vault: string;
    first_day: number;
    next_day: number;
    ts: string;
    seq: string;
    v: number;
    i: number;
    o: number;
    s: string;
    x: number;
  }>(
    `select chain_id, ${bytesToHex('vault')} as vault, first_day, next_day, ts::text, seq::text, value_usd as v,
            capital_in_usd as i, capital_out_usd as o, strategy as s, return_index as x
     from vault_days_carry`,
  );
  return new Map(
    rows.map((r) => [
      vaultId(r.chain_id, r.vault),
      {
        firstDay: r.first_day,
        nextDay: r.next_day,
        last: {
          ts: Number(r.ts),
          seq: r.seq,
          valueUsd: r.v,
          capitalInUsd: r.i,
          capitalOutUsd: r.o,
          strategy: r.s,
          returnIndex: r.x,
        },
      },
    ]),
  );
}

/**
 * Vaults' points after a point (exclusive, in fold order (ts, seq); null: from the first) and
 * before `to`, each vault's in fold order, as `vaultReturnSeries` reads them: one primary-key range
 * per vault. `offset 0` keeps the planner from flattening the lateral into a hash join over every
 * point of the table (measured: 144 ms for a day of 20 vaults at 90,000 points kept, 16 ms so).
 */
async function pointsAfter(
  c: PoolClient,
  ranges: readonly { vault: string; after: Point | null; to: number }[],
): Promise<Map<string, Point[]>> {
  const { rows } = await c.query<{
    chain_id: number;
    vault: string;
    ts: string;
    seq: string;
    v: number;
    i: number;
    o: number;
    s: string;
    x: number;
  }>(
    `select q.c as chain_id, q.v as vault, e.ts::text as ts, e.seq::text as seq, e.value_usd::float8 as v,
            e.capital_in_usd::float8 as i, e.capital_out_usd::float8 as o, e.strategy as s,
            e.return_index::float8 as x
     from unnest($5::int[], $1::text[], $2::bigint[], $3::bigint[], $4::bigint[])
          with ordinality as q(c, v, ts, seq, hi, n)
     cross join lateral (
       select ts, seq, value_usd, capital_in_usd, capital_out_usd, strategy, return_index from equity_points
       where chain_id = q.c and vault = ${hexToBytes('q.v')} and (ts, seq) > (coalesce(q.ts, -1), coalesce(q.seq, -1)) and ts < q.hi
       order by ts, seq offset 0
     ) e
     order by q.n, e.ts, e.seq`,
    [
      ranges.map((r) => refOf(r.vault).vault),
      ranges.map((r) => r.after?.ts ?? null),
      ranges.map((r) => r.after?.seq ?? null),
      ranges.map((r) => r.to),
      ranges.map((r) => refOf(r.vault).chainId),
    ],
  );
  const out = new Map<string, Point[]>();
  for (const r of rows) {
    const id = vaultId(r.chain_id, r.vault);
    let list = out.get(id);
    if (!list) {
      list = [];
      out.set(id, list);
    }
    list.push({
      ts: Number(r.ts),
      seq: r.seq,
      valueUsd: r.v,
      capitalInUsd: r.i,
      capitalOutUsd: r.o,
      strategy: r.s,
      returnIndex: r.x,
    });
  }
  return out;
}

async function writeCells(c: PoolClient, cells: readonly { vault: string; cell: DayCell }[]): Promise<void> {
  if (cells.length === 0) return;
  await c.query(
    `insert into vault_days (chain_id, vault, day, strategy, r, weight_usd)
     select t.c, ${hexToBytes('t.v')}, t.d, t.s, t.r, t.w
     from unnest($6::int[], $1::text[], $2::int[], $3::text[], $4::float8[], $5::float8[]) as t(c, v, d, s, r, w)`,
    [
      cells.map((x) => refOf(x.vault).vault),
      cells.map((x) => x.cell.day),
      cells.map((x) => x.cell.strategy),
      cells.map((x) => x.cell.r),
      cells.map((x) => x.cell.weightUsd),
      cells.map((x) => refOf(x.vault).chainId),
    ],
  );
}

async function writeCarries(
  c: PoolClient,
  moved: readonly { vault: string; carry: DayCarry<Point> }[],
): Promise<void> {
  if (moved.length === 0) return;
  const col = <T>(f: (k: DayCarry<Point>) => T) => moved.map((m) => f(m.carry));
  await c.query(
    `insert into vault_days_carry (chain_id, vault, first_day, next_day, ts, seq, value_usd, capital_in_usd,
                                   capital_out_usd, strategy, return_index)
     select t.c, ${hexToBytes('t.v')}, t.f, t.n, t.ts, t.q, t.val, t.i, t.o, t.s, t.x
     from unnest($11::int[], $1::text[], $2::int[], $3::int[], $4::bigint[], $10::bigint[], $5::float8[], $6::float8[],
                 $7::float8[], $8::text[], $9::float8[]) as t(c, v, f, n, ts, q, val, i, o, s, x)
     on conflict (chain_id, vault) do update set first_day = excluded.first_day, next_day = excluded.next_day,
       ts = excluded.ts, seq = excluded.seq, value_usd = excluded.value_usd, capital_in_usd = excluded.capital_in_usd,
       capital_out_usd = excluded.capital_out_usd, strategy = excluded.strategy, return_index = excluded.return_index`,
    [
      moved.map((m) => refOf(m.vault).vault),
      col((k) => k.firstDay),
      col((k) => k.nextDay),
      col((k) => k.last.ts),
      col((k) => k.last.valueUsd),
      col((k) => k.last.capitalInUsd),
      col((k) => k.last.capitalOutUsd),
      col((k) => k.last.strategy),
      col((k) => k.last.returnIndex),
      col((k) => k.last.seq),
      moved.map((m) => refOf(m.vault).chainId),
    ],
  );
}

/**
 * Aggregates `days` again from every vault's cells of those days, members in (chain, address)
 * order — the order `strategiesStats` sums them in over `vaultReturnSeries`, so the sums are the
 * same floats.
 */
async function aggregateDays(c: PoolClient, days: readonly number[]): Promise<void> {
  const { rows: cells } = await c.query<{
    chain_id: number;
    vault: string;
    day: number;
    strategy: string;
    r: number;
    w: number;
  }>(
    `select chain_id, ${bytesToHex('vault')} as vault, day, strategy, r, weight_usd as w from vault_days
     where day = any($1::int[]) order by chain_id, vault, day`,
    [days],
  );
  const rows = cells.map((r) => ({ ...r, vault: vaultId(r.chain_id, r.vault) }));
  // strategy → its members' series over these days, in vault order.
  const members = new Map<string, Map<string, DailyReturn[]>>();
  for (const r of rows) {
    let byVault = members.get(r.strategy);
    if (!byVault) {
      byVault = new Map();
      members.set(r.strategy, byVault);
    }
    let list = byVault.get(r.vault);
    if (!list) {
      list = [];
      byVault.set(r.vault, list);
    }
    list.push({ day: utcDay(r.day * DAY_MS), r: r.r, weightUsd: r.w });
  }
  const out: { strategy: string; day: number; r: number; w: number }[] = [];
  for (const [strategy, byVault] of members)
    for (const d of aggregateDailyReturns([...byVault.values()]))
      out.push({ strategy, day: Date.parse(d.day) / DAY_MS, r: d.r, w: d.weightUsd });
  await c.query('delete from strategy_days where day = any($1::int[])', [days]);
  if (out.length === 0) return;
  await c.query(
    `insert into strategy_days (strategy, day, r, weight_usd)
     select * from unnest($1::text[], $2::int[], $3::float8[], $4::float8[])`,
    [out.map((o) => o.strategy), out.map((o) => o.day), out.map((o) => o.r), out.map((o) => o.w)],
  );
}
