/**
 * Store ceiling: what Postgres alone spends to keep the rows the projection writes for every
 * record — its ledger row and its equity point, with this schema's indexes — with no Kafka and no
 * fold on the timed path. It bounds bench:projector and bench:rebuild from above on the machine it
 * runs on: no projector, however fast, folds more records per second than Postgres stores.
 *
 * BENCH_RECORDS (default 300,000) generated records of BENCH_VAULTS (default 1,000) vaults are
 * folded by the projector's own fold (services/projector/src/rows.ts) into the exact rows it
 * writes (untimed): ledger rows, equity points and the records' bodies (one bundle per vault and
 * transaction). Then BENCH_SESSIONS (default: this machine's cores) concurrent sessions, each
 * with its own share of the vaults (as partitions are shared), write them through the projector's
 * own statements (ProjectionTx: COPY into ledger, record_bundles and equity_points) in transactions of BENCH_BATCH
 * (default 4,000) records, like the projector's batches. Prints records/s and the CPU the Postgres
 * backends spent per record; last line `store-ceiling: <records/s> records/s`.
 */
import { availableParallelism, loadavg } from 'node:os';
import { dropDatabase } from '@vault-yield/devstack/postgres';
import { equityPoint, type Micros, type VaultState } from '@vault-yield/domain';
import { bodyOf, foldStep, ledgerRow, offLedger } from '@vault-yield/projector';
import { createPgPool, createProjectionStore, type EquityRow, type LedgerRow } from '@vault-yield/store';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { resolvePostgres } from '@vault-yield/test-kit/services';
import { createBenchDatabase } from './log-fixture.js';
import { cpuSeconds } from './proc.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 300_000);
const VAULTS = Number(process.env.BENCH_VAULTS ?? 1_000);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? availableParallelism());
const BATCH = Number(process.env.BENCH_BATCH ?? 4_000);
const KEEP = process.env.BENCH_KEEP === 'true';
const SCHEMA = 'vault_yield';
/** Statements run after the migrations (`;`-separated): a storage variant to measure. */
const SQL = process.env.BENCH_SQL ?? '';
/** `none`: no record bodies (what keeping them costs). */
const BODIES = process.env.BENCH_BODIES !== 'none';

interface Batch {
  ledger: LedgerRow[];
  equity: EquityRow[];
  bundles: Map<string, Uint8Array[]>;
}

async function main() {
  const postgres = await resolvePostgres();
  console.log(`postgres: ${postgres.description}`);
  const db = await createBenchDatabase(postgres.url, 'store', SCHEMA);
  try {
    if (SQL) {
      const admin = createPgPool({ url: db.writerUrl, schema: SCHEMA, applicationName: 'bench-sql', max: 1 });
      await admin.query(SQL).finally(() => admin.end());
      console.log(`variant: ${SQL}`);
    }
    // The rows the projector writes, per session (its vaults) and per transaction (BATCH records).
    const gen = createHistoryGenerator({ vaults: VAULTS, seed: 7 });
    const states = new Map<string, { state: VaultState; micros: Micros | null; session: number }>();
    const sessions = Array.from({ length: SESSIONS }, () => ({ batches: [] as Batch[], records: 0 }));
    const t0 = performance.now();
    let equityRows = 0;
    let ledgerRows = 0;
    for (let done = 0; done < RECORDS; ) {
      const records = gen.take(Math.min(20_000, RECORDS - done));
      for (const r of records) {
        const before = states.get(r.vault);
        const session = before?.session ?? states.size % SESSIONS;
        const step = foldStep(before?.state ?? null, r);
        if (!step.ok) throw new Error(`generated record refused by the fold: ${step.reason}`);
        // As the projector: equity points at block ends only.
        const point = r.lastInBlock ? equityPoint(before?.micros ?? null, step.state) : null;
        states.set(r.vault, {
          state: step.state,
          micros: point ? point.micros : (before?.micros ?? null),
          session,
        });
        const s = sessions[session]!;
        if (s.records % BATCH === 0) s.batches.push({ ledger: [], equity: [], bundles: new Map() });
        const batch = s.batches.at(-1)!;
        // As the projector: sequenced marks have no ledger row (their body is in the bundle).
        if (!offLedger(r)) {
          batch.ledger.push(ledgerRow(r));
          ledgerRows++;
        }
        if (BODIES) {
          const list = batch.bundles.get(r.vault) ?? [];
          list.push(bodyOf(r, null));
          batch.bundles.set(r.vault, list);
        }
        if (point?.row) {
          batch.equity.push(point.row);
          equityRows++;
        }
        s.records++;
      }
      done += records.length;
    }
    console.log(
      `folded ${RECORDS} records (${VAULTS} vaults) into ${ledgerRows} ledger rows and ${equityRows} equity points ` +
        `in ${((performance.now() - t0) / 1000).toFixed(1)} s (untimed)`,
    );

    // Timed: SESSIONS sessions side by side, each its batches in order, one transaction each.
    const pool = createPgPool({
      url: db.writerUrl,
      schema: SCHEMA,
      applicationName: 'bench-store',
      max: SESSIONS,
    });
    const store = createProjectionStore(pool);
    await Promise.all(sessions.map(() => pool.query('select pg_sleep(0.05)')));
    const { rows: backends } = await pool.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = current_database() and application_name = 'bench-store'`,
    );
    const backendCpu = () => backends.reduce((sum, b) => sum + cpuSeconds(b.pid), 0);
    const cpu0 = backendCpu();
    const start = performance.now();
    await Promise.all(
      sessions.map(async (s) => {
        for (const b of s.batches)
          await store.transaction(async (tx) => {
            await tx.copyLedger(b.ledger);
            await tx.insertEquity(b.equity);
            await tx.copyBundles(b.bundles);
          });
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    const cpu = backendCpu() - cpu0;
    const { rows: check } = await pool.query<{ n: number }>('select count(*)::int as n from ledger');
    await pool.end();
    if (check[0]!.n !== ledgerRows)
      throw new Error(`stored ${check[0]!.n} ledger rows, expected ${ledgerRows}`);

    const perRecord = (cpu * 1e6) / RECORDS;
    const cores = availableParallelism();
    console.log(
      `stored ${RECORDS} records (ledger row + equity point each) in ${seconds.toFixed(1)} s: ` +
        `${SESSIONS} sessions (${backends.length} backends), ${sessions[0]!.batches.length} transactions each`,
    );
    console.log(
      `Postgres CPU per record: ${perRecord.toFixed(1)} µs (${cores} cores: at most ` +
        `${((cores * 1e6) / perRecord).toFixed(0)} records/s with nothing else running); machine load ${loadavg()[0]?.toFixed(2)}`,
    );
    console.log(`store-ceiling: ${(RECORDS / seconds).toFixed(0)} records/s`);
  } finally {
    if (!KEEP) await dropDatabase(postgres.url, db.database).catch(() => {});
    await postgres.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
