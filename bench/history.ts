/**
 * History at scale (#49): what a strategy-stats refresh and an all-time chart cost as years of
 * equity points pile up — they must follow the window shown, not the history kept.
 *
 * For each length (1 ×, 4 ×, 16 × BENCH_DAYS days, default 30; the same BENCH_VAULTS vaults,
 * default 20, a point every BENCH_POINT_MINUTES minutes, default 10: 144 a vault a day), a fresh
 * schema is filled through the projection's write path (ProjectionTx: COPY of equity points,
 * snapshots, the partition's offset and extent, one transaction per day) and the stats filled
 * once (`refreshStrategyStats`: the daily rollups' first fill, which reads every point once, as
 * an upgraded deployment's first refresh does). Then, timed:
 * - the refresh after one more day is folded (the day completes: what a refresh costs when it
 *   has work; the other refreshes of the day find none), median of BENCH_REFRESHES (3) days;
 * - the all-time chart: `equitySeries` with points=200 over every point of a vault,
 *   BENCH_CHARTS (300) requests over the vaults, p99.
 * The definition's cost is printed beside it (every point read: `vaultReturnSeries` +
 * `strategiesStats`, as before the rollups).
 * Last line: `history: stats refresh X ms at 1 ×, Y ms at 16 × (R ×); all-time chart p99 A ms at
 * 1 ×, B ms at 16 × (S ×)` — target R ≤ 2, S ≤ 2, B ≤ 50.
 */
import { dropDatabase } from '@vault-yield/devstack/postgres';
import { type EquityPoint, strategiesStats } from '@vault-yield/domain';
import { refreshStrategyStats } from '@vault-yield/projector';
import {
  createPgPool,
  createProjectionStore,
  equitySeries,
  type Pool,
  type SnapshotRow,
  vaultFoldExtents,
  vaultReturnSeries,
} from '@vault-yield/store';
import { resolvePostgres } from '@vault-yield/test-kit/services';
import { createBenchDatabase } from './log-fixture.js';

const DAYS = Number(process.env.BENCH_DAYS ?? 30);
const VAULTS = Number(process.env.BENCH_VAULTS ?? 20);
const EVERY_MIN = Number(process.env.BENCH_POINT_MINUTES ?? 10);
const REFRESHES = Number(process.env.BENCH_REFRESHES ?? 3);
const CHARTS = Number(process.env.BENCH_CHARTS ?? 300);
const LENGTHS = (process.env.BENCH_LENGTHS ?? '1,4,16').split(',').map(Number);
const KEEP = process.env.BENCH_KEEP === 'true';
const SCHEMA = 'vault_yield';
/** The chain the bench's vaults are on (a vault is (chain, address)). */
const CHAIN = 31337;
const DAY = 86_400_000;
const T0 = Date.UTC(2024, 0, 1);
const STRATEGIES = ['wide', 'narrow'];
const GROUP = 'bench-history';
const TOPIC = 'vaults';

const vaultOf = (i: number) => `0x${(i + 1).toString(16).padStart(40, '0')}`;
const ms = (t0: number) => performance.now() - t0;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

/**
 * A deterministic walk per vault: value, return index, holding value (the vs-holding line: half
 * the vault's moves), strategy; one point every EVERY_MIN minutes.
 */
function createVaults() {
  return Array.from({ length: VAULTS }, (_, i) => ({
    vault: vaultOf(i),
    seq: 0,
    value: 1000 + i,
    hold: 1000 + i,
    index: 1,
    rng: i * 7919 + 1,
    strategy: STRATEGIES[i % STRATEGIES.length]!,
  }));
}
type Walk = ReturnType<typeof createVaults>[number];

function pointsOfDay(walks: Walk[], day: number): { points: EquityPoint[]; snapshots: SnapshotRow[] } {
  const points: EquityPoint[] = [];
  const snapshots: SnapshotRow[] = [];
  const perDay = Math.floor((24 * 60) / EVERY_MIN);
  for (const w of walks) {
    let ts = 0;
    for (let k = 0; k < perDay; k++) {
      ts = T0 + day * DAY + k * EVERY_MIN * 60_000 + (w.seq % 7) * 1000;
      w.rng = (w.rng * 48271) % 2147483647;
      const r = ((w.rng % 2001) - 1000) / 1_000_000; // ±0.1 % a point
      w.index *= 1 + r;
      w.value *= 1 + r;
      w.hold *= 1 + r / 2;
      if (w.rng % 4001 === 0)
        w.strategy = STRATEGIES[(STRATEGIES.indexOf(w.strategy) + 1) % STRATEGIES.length]!;
      w.seq++;
      points.push({
        chainId: CHAIN,
        vault: w.vault,
        ts,
        blockNumber: day * perDay + k + 1,
        seq: w.seq,
        valueUsd: w.value.toFixed(6),
        capitalInUsd: '1000.000000',
        capitalOutUsd: '0.000000',
        strategy: w.strategy,
        returnIndex: w.index.toFixed(18),
        holdValueUsd: w.hold.toFixed(6),
      });
    }
    snapshots.push({
      vault: w.vault,
      chainId: 31337,
      owner: w.vault,
      strategy: w.strategy,
      status: 'earning',
      snapshot: '{}',
      state: '{}',
      lastRecordId: `r${w.seq}`,
      recordsApplied: w.seq,
      createdAt: T0,
      updatedAt: ts,
      head: { blockNumber: day * perDay + perDay, txIndex: 0, logIndex: 0 },
      lastSeq: null,
      held: false,
    });
  }
  return { points, snapshots };
}

/** One day folded through the projection's write path: points, snapshots, offset and extent. */
async function foldDay(pool: Pool, walks: Walk[], day: number): Promise<void> {
  const { points, snapshots } = pointsOfDay(walks, day);
  await createProjectionStore(pool).transaction(async (tx) => {
    await tx.lockPartitionAt(GROUP, TOPIC, 0);
    await tx.insertEquity(points);
    await tx.upsertSnapshots(snapshots);
    await tx.savePartition({ groupId: GROUP, topic: TOPIC, partition: 0, nextOffset: String(day + 1) });
  });
}

interface Figures {
  length: number;
  points: number;
  fillMs: number;
  refreshMs: number;
  idleMs: number;
  everyPointMs: number;
  chartP50: number;
  chartP99: number;
}

async function measure(adminUrl: string, length: number): Promise<Figures> {
  const db = await createBenchDatabase(adminUrl, `history${length}`, SCHEMA);
  const pool = createPgPool({ url: db.writerUrl, schema: SCHEMA, applicationName: 'bench-history', max: 3 });
  const reader = createPgPool({
    url: db.readerUrl,
    schema: SCHEMA,
    applicationName: 'bench-history-r',
    max: 2,
  });
  try {
    await pool.query(
      `insert into strategies (id, name, updated_at) select s, s, 0 from unnest($1::text[]) s on conflict do nothing`,
      [STRATEGIES],
    );
    const walks = createVaults();
    const days = DAYS * length;
    const t0 = performance.now();
    for (let d = 0; d < days; d++) await foldDay(pool, walks, d);
    await pool.query('analyze');
    const { rows } = await pool.query<{ n: string }>('select count(*)::text as n from equity_points');
    const points = Number(rows[0]!.n);
    console.log(
      `${length} ×: ${days} days, ${points.toLocaleString('en-US')} points written in ${(ms(t0) / 1000).toFixed(1)} s`,
    );

    let t = performance.now();
    await refreshStrategyStats(pool, 2);
    const fillMs = ms(t);
    const refreshes: number[] = [];
    let idleMs = 0;
    for (let k = 0; k < REFRESHES; k++) {
      await foldDay(pool, walks, days + k);
      t = performance.now();
      await refreshStrategyStats(pool, 2);
      refreshes.push(ms(t));
      t = performance.now();
      await refreshStrategyStats(pool, 2);
      idleMs = ms(t);
    }
    // The definition (every point read), for comparison: the figures must be the same.
    t = performance.now();
    const extents = await vaultFoldExtents(pool);
    const series = [...(await vaultReturnSeries(pool))].map(([v, p]) => ({
      points: p,
      asOf: extents.get(v),
    }));
    const every = strategiesStats(series, { minDailyReturns: 2 });
    const everyPointMs = ms(t);
    const stored = await pool.query<{ id: string; live_apr: number | null; sigma: number | null }>(
      'select id, live_apr, sigma from strategies order by id',
    );
    for (const s of stored.rows) {
      const e = every.get(s.id);
      if (!e || e.liveApr !== s.live_apr || e.sigma !== s.sigma)
        throw new Error(
          `strategy ${s.id}: rollups ${s.live_apr}/${s.sigma}, every point ${e?.liveApr}/${e?.sigma}`,
        );
    }

    // What each table holds and weighs (heap + indexes): how it grows with vaults × time.
    const sizes = await pool.query<{ t: string; rows: string; bytes: string }>(
      `select t, (xpath('/row/n/text()', query_to_xml(format('select count(*) as n from %I', t), false, true, '')))[1]::text as rows,
              pg_total_relation_size(t::regclass)::text as bytes
       from unnest(array['equity_points', 'vault_days', 'vault_days_carry', 'strategy_days']) t`,
    );
    console.log(
      `${length} ×: ${sizes.rows
        .map(
          (r) =>
            `${r.t} ${Number(r.rows).toLocaleString('en-US')} rows, ${(Number(r.bytes) / 2 ** 20).toFixed(1)} MiB (${Number(r.rows) > 0 ? Math.round(Number(r.bytes) / Number(r.rows)) : 0} B a row)`,
        )
        .join('; ')}`,
    );

    const lat: number[] = [];
    for (let k = 0; k < CHARTS; k++) {
      const vault = vaultOf(k % VAULTS);
      t = performance.now();
      const got = await equitySeries(reader, { chainId: CHAIN, vault, points: 200 });
      lat.push(ms(t));
      if (got.length !== 200) throw new Error(`chart of ${vault}: ${got.length} points`);
    }
    lat.sort((a, b) => a - b);
    const f: Figures = {
      length,
      points,
      fillMs,
      refreshMs: median(refreshes),
      idleMs,
      everyPointMs,
      chartP50: lat[Math.floor(lat.length * 0.5)]!,
      chartP99: lat[Math.min(lat.length - 1, Math.floor(lat.length * 0.99))]!,
    };
    console.log(
      `${length} ×: first fill ${fmt(f.fillMs)} ms; refresh after a day ${fmt(f.refreshMs)} ms, with nothing new ${fmt(f.idleMs)} ms; every point read (before) ${fmt(f.everyPointMs)} ms; chart p50 ${fmt(f.chartP50)} ms, p99 ${fmt(f.chartP99)} ms`,
    );
    return f;
  } finally {
    await reader.end();
    await pool.end();
    if (!KEEP) await dropDatabase(adminUrl, db.database).catch(() => {});
  }
}

async function main() {
  const postgres = await resolvePostgres();
  console.log(
    `postgres: ${postgres.description}; ${VAULTS} vaults, a point every ${EVERY_MIN} min, ${DAYS} days at 1 ×`,
  );
  const figures: Figures[] = [];
  for (const length of LENGTHS) figures.push(await measure(postgres.url, length));
  const a = figures[0]!;
  const b = figures.at(-1)!;
  const R = b.refreshMs / a.refreshMs;
  const S = b.chartP99 / a.chartP99;
  console.log(
    `history: stats refresh ${fmt(a.refreshMs)} ms at ${a.length} ×, ${fmt(b.refreshMs)} ms at ${b.length} × (${R.toFixed(2)} ×); all-time chart p99 ${fmt(a.chartP99)} ms at ${a.length} ×, ${fmt(b.chartP99)} ms at ${b.length} × (${S.toFixed(2)} ×)`,
  );
  await postgres.stop?.();
  if (R > 2 || S > 2 || b.chartP99 > 50) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
