import { ident, type Pool, type PoolClient, withTransaction } from '../pool/index.js';
import { schemaTables } from './lifecycle.js';

type Queryable = Pick<Pool, 'query'>;

/**
 * What a projection comparison leaves out, and why. Everything else is compared column by column.
 * - consumer_offsets: keyed by the consumer group, which differs by construction; `verify` compares
 *   the offsets themselves before it checksums (both sides must have applied the same records).
 * - indexer_*: the indexer's bookkeeping, not a projection of the log.
 * - record_bundles: the log's own bytes, cut into rows by the projector's batch boundaries (which
 *   differ between runs); which records a vault holds is the ledger's, and that is compared.
 * - stream_commits and ledger.commit_xid (migration 0021): the live streams' numbering of the
 *   projector's transactions, by batch boundaries and transaction ids.
 * - wall-clock columns written by the projection itself (`updated_at` of the strategy tables,
 *   `created_at` of dead letters, `applied_at` of migrations) and sequence ids (dead_letters.id).
 * - schema_migrations.checksum: recorded by the first `migrate` of a build that keeps checksums, so
 *   a live schema not migrated since holds none; migrate itself refuses a changed file.
 *   vault_snapshot.updated_at is the block time of the last record: compared.
 * strategies.live_apr / sigma / history_days are compared: functions of the log alone (the
 * compared equity points and each vault's fold extent; the lp_* figures, the compared vault
 * states), refreshed on a timer — a live schema's may
 * be one refresh behind its last fold (`verify` waits for the refresh; see STRATEGY_FIGURES).
 * - vault_snapshot.log_topic / log_partition: where the vault's records were read from
 *   (bookkeeping of the fold's extent, migration 0024), not a figure: a reindexed log has other
 *   topic and partitions, and a schema upgraded in place fills them at each vault's next record.
 */
export const CHECKSUM_SKIPPED_TABLES: readonly string[] = [
  'consumer_offsets',
  'record_bundles',
  'stream_commits',
];
export const CHECKSUM_EXCLUDED_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  dead_letters: ['id', 'created_at'],
  ledger: ['commit_xid'],
  schema_migrations: ['applied_at', 'checksum'],
  strategies: ['updated_at'],
  screen_meta: ['updated_at'],
  catalogue_meta: ['updated_at'],
  vault_snapshot: ['log_topic', 'log_partition'],
};

/**
 * The strategies' realised figures: compared like every column, but refreshed from the compared
 * tables on a timer (STATS_INTERVAL_MS) rather than in the fold's transaction, so a live schema
 * just folded may differ by one refresh (`verify` waits for it before it reports).
 */
export const STRATEGY_FIGURES: readonly string[] = [
  'live_apr',
  'sigma',
  'history_days',
  // the LP figures per strategy (migration 0031), written by the same refresh
  'lp_fee_apr',
  'lp_reward_apr',
  'lp_time_in_range',
  'lp_rebalances_per_week',
  'lp_divergence_apr',
  'lp_max_drawdown',
];

/**
 * Tables the same refresh writes (the daily rollups behind the figures, migration 0027): compared,
 * and, like the figures, possibly one refresh behind a live schema's last fold.
 */
export const STATS_REFRESHED_TABLES: readonly string[] = [
  'vault_days',
  'vault_days_carry',
  'strategy_days',
  'vault_days_stale',
];

export const comparedTable = (table: string): boolean =>
  !table.startsWith('indexer_') && !CHECKSUM_SKIPPED_TABLES.includes(table);

export interface TableChecksum {
  table: string;
  rows: number;
  /** Order-independent hash of the multiset of rows (the md5 of each row's text, summed). */
  hash: string;
  columns: string[];
}

/** Names of a table's columns, in order, and which of them hold `json` (compared as jsonb). */
async function tableColumns(
  db: Queryable,
  schema: string,
  table: string,
): Promise<{ names: string[]; json: Set<string> }> {
  const { rows } = await db.query<{ name: string; json: boolean }>(
    `select a.attname as name, a.atttypid = 'json'::regtype as json from pg_attribute a
     join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = $1 and c.relname = $2 and a.attnum > 0 and not a.attisdropped order by a.attnum`,
    [schema, table],
  );
  return { names: rows.map((r) => r.name), json: new Set(rows.filter((r) => r.json).map((r) => r.name)) };
}

/**
 * A row as text. `json` columns keep their text as written, so they are cast to jsonb first: rows
 * compare by value whatever their spacing or key order (and equal a jsonb column of older schemas).
 */
const rowExpr = (columns: readonly string[], json: ReadonlySet<string> = new Set()) =>
  `row(${columns.map((c) => (json.has(c) ? `${ident(c)}::jsonb` : ident(c))).join(', ')})::text`;

/** Row count and hash of one table over the given columns. */
export async function tableChecksum(
  db: Queryable,
  schema: string,
  table: string,
  columns: readonly string[],
  json: ReadonlySet<string> = new Set(),
  chainId?: number,
): Promise<TableChecksum> {
  // Summing two 64-bit halves of each row's md5 (as numeric: no overflow) needs no sort, so it
  // stays cheap on millions of rows; two tables have equal sums iff their rows are equal, up to a
  // 2^-64 chance per differing row set.
  const { rows } = await db.query<{ n: string; hash: string }>(
    `select count(*)::text as n,
            md5(coalesce(sum(('x' || substr(h, 1, 16))::bit(64)::int8::numeric), 0)::text || ':' ||
                coalesce(sum(('x' || substr(h, 17, 16))::bit(64)::int8::numeric), 0)::text) as hash
     from (select md5(${rowExpr(columns, json)}) as h from ${ident(schema)}.${ident(table)}${onChain(chainId)}) q`,
  );
  return { table, rows: Number(rows[0]?.n ?? 0), hash: rows[0]?.hash ?? '', columns: [...columns] };
}

/** The rows of one chain (#45): a table's `where` (an integer, never text, reaches the SQL). */
const onChain = (chainId: number | undefined) =>
  chainId === undefined ? '' : ` where chain_id = ${Math.trunc(Number(chainId))}`;

export interface TableDiff {
  table: string;
  equal: boolean;
  left: TableChecksum | null;
  right: TableChecksum | null;
  /** Columns present on one side only (compared columns are the common ones). */
  columnsOnlyLeft: string[];
  columnsOnlyRight: string[];
  /** Some rows (as text) found on one side only. */
  onlyLeft: string[];
  onlyRight: string[];
}

export interface CompareOptions {
  /** Rows listed per side and table when they differ (default 5). */
  sample?: number;
  /** Compare only these tables. */
  tables?: readonly string[];
  /** Columns left out beyond CHECKSUM_EXCLUDED_COLUMNS, by table. */
  exclude?: Readonly<Record<string, readonly string[]>>;
  /**
   * Compare only the rows of this chain, in the tables keyed by chain (a `chain_id` column on both
   * sides); the others — the strategy tables, which gather every chain — are left out.
   */
  chainId?: number;
}

/**
 * Compares two projection schemas table by table (row counts and row hashes; differing rows
 * sampled). Run it inside one snapshot (withSnapshot) when either side is being written.
 */
export async function compareSchemas(
  db: Queryable,
  left: string,
  right: string,
  o: CompareOptions = {},
): Promise<TableDiff[]> {
  const sample = o.sample ?? 5;
  const lt = await schemaTables(db, left);
  const rt = await schemaTables(db, right);
  const all = [...new Set([...lt, ...rt])]
    .filter(comparedTable)
    .filter((t) => !o.tables || o.tables.includes(t));
  all.sort();
  const out: TableDiff[] = [];
  for (const table of all) {
    const excluded = [...(CHECKSUM_EXCLUDED_COLUMNS[table] ?? []), ...(o.exclude?.[table] ?? [])];
    const none = { names: [] as string[], json: new Set<string>() };
    const lcols = lt.includes(table) ? await tableColumns(db, left, table) : none;
    const rcols = rt.includes(table) ? await tableColumns(db, right, table) : none;
    const lc = lcols.names.filter((c) => !excluded.includes(c));
    const rc = rcols.names.filter((c) => !excluded.includes(c));
    const common = lc.filter((c) => rc.includes(c));
    if (o.chainId !== undefined && !common.includes('chain_id')) continue;
    const l = lt.includes(table) ? await tableChecksum(db, left, table, common, lcols.json, o.chainId) : null;
    const r = rt.includes(table)
      ? await tableChecksum(db, right, table, common, rcols.json, o.chainId)
      : null;
    const diff: TableDiff = {
      table,
      equal: false,
      left: l,
      right: r,
      columnsOnlyLeft: lc.filter((c) => !rc.includes(c)),
      columnsOnlyRight: rc.filter((c) => !lc.includes(c)),
      onlyLeft: [],
      onlyRight: [],
    };
    diff.equal =
      !!l &&
      !!r &&
      l.rows === r.rows &&
      l.hash === r.hash &&
      diff.columnsOnlyLeft.length === 0 &&
      diff.columnsOnlyRight.length === 0;
    if (!diff.equal && l && r && sample > 0) {
      const json = (side: string) => (side === left ? lcols.json : rcols.json);
      const side = async (a: string, b: string) =>
        (
          await db.query<{ r: string }>(
            `select r from (select ${rowExpr(common, json(a))} as r from ${ident(a)}.${ident(table)}${onChain(o.chainId)}
                            except all
                            select ${rowExpr(common, json(b))} from ${ident(b)}.${ident(table)}${onChain(o.chainId)}) d
             order by r limit ${Number(sample)}`,
          )
        ).rows.map((x) => (x.r.length > 300 ? `${x.r.slice(0, 300)}…` : x.r));
      diff.onlyLeft = await side(left, right);
      diff.onlyRight = await side(right, left);
    }
    out.push(diff);
  }
  return out;
}

/** Checksums of every compared table of a schema (e.g. to compare two builds over time). */
export async function schemaChecksums(db: Queryable, schema: string): Promise<Record<string, TableChecksum>> {
  const out: Record<string, TableChecksum> = {};
  for (const table of (await schemaTables(db, schema)).filter(comparedTable)) {
    const excluded = CHECKSUM_EXCLUDED_COLUMNS[table] ?? [];
    const cols = await tableColumns(db, schema, table);
    out[table] = await tableChecksum(
      db,
      schema,
      table,
      cols.names.filter((c) => !excluded.includes(c)),
      cols.json,
    );
  }
  return out;
}

/** Runs `fn` in one read-only REPEATABLE READ transaction: every query sees the same snapshot. */
export function withSnapshot<T>(pool: Pool, fn: (db: PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(pool, fn, 'begin isolation level repeatable read read only');
}
