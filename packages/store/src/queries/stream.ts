import { refOf } from '@vault-yield/domain';
import { hexToBytes, type Pool } from '../pool/index.js';
import { LEDGER_ROW_SQL } from './ledger.js';

/**
 * The live streams' reads (migration 0021): the projection's commits in commit order, each with
 * the ledger rows it wrote. A commit's number is its place in that order (ProjectionTx.noteCommit
 * numbers them under a lock held to the commit), so "the commits after n" never misses one that
 * commits later with a smaller number.
 */

/** One commit of the vault projection, as the streams send it. */
export interface StreamCommit {
  /** Its number (int8 as decimal text). */
  seq: string;
  /**
   * The vaults it touched, by vault id (`eip155:{chainId}:{address}`, migration 0028), ascending.
   */
  vaults: string[];
  /** Its ledger rows (served JSON text) with their vault's id, by vault, then oldest first. */
  rows: { vault: string; json: string }[];
  /** Ids of the ledger rows its reverts deleted (migration 0022), ascending. */
  retracted: string[];
  /**
   * Its rows by vault id when they were left out (more than the page's `maxRows`: the commit alone
   * in its page); read them in slices with `streamRows`. Absent: `rows` holds them all.
   */
  counts?: Map<string, number>;
}

export interface StreamBounds {
  /** Highest commit number (0 when none). */
  head: string;
  /** Lowest commit number still kept (null when none): a cursor below it cannot be resumed. */
  oldest: string | null;
}

export async function streamBounds(pool: Pool): Promise<StreamBounds> {
  const { rows } = await pool.query<{ head: string; oldest: string | null }>({
    name: 'reader.stream-bounds',
    text: 'select coalesce(max(seq), 0)::text as head, min(seq)::text as oldest from stream_commits',
  });
  return rows[0] ?? { head: '0', oldest: null };
}

/** What one page of the streams holds at most (the first commit's rows are read in slices beyond it). */
export interface StreamPageBounds {
  /** Ledger rows. */
  rows: number;
  /** Bytes of the rows' served JSON (UTF-8). */
  bytes: number;
}

const UNBOUNDED: StreamPageBounds = { rows: Number.MAX_SAFE_INTEGER, bytes: Number.MAX_SAFE_INTEGER };

/**
 * The (at most `limit`) commits after `after`, in order, with their ledger rows of `types`
 * (the activity vocabulary: what GET events serves), stopping before the commit that would take
 * the page past `bounds` (its rows, or their JSON's bytes); a first commit with more comes alone,
 * with its rows counted by vault instead (`counts`: read them with `streamRows`). A commit whose
 * rows a later revert deleted comes with the rows that remain.
 */
export async function streamCommits(
  pool: Pool,
  after: string,
  limit: number,
  types: readonly string[],
  bounds: StreamPageBounds = UNBOUNDED,
): Promise<StreamCommit[]> {
  const { rows } = await pool.query<{
    seq: string;
    vaults: string[];
    retracted: string[] | null;
    whole: boolean;
    vault: string | null;
    json: string | null;
  }>({
    name: 'reader.stream-commits',
    // Each commit's rows counted; the commits within the rows' bound (a prefix: the running sum
    // only grows; the first whatever its rows) have their rows built once (`l`: at most the
    // bound's rows), measured in bytes, and sent when their commit is in the page — the first, or
    // within both bounds. Only the first may exceed one: its rows are left out (`whole` false) and
    // counted by the caller.
    text: `with n as (
          select s.seq, s.xid, s.vaults, s.retracted, row_number() over (order by s.seq) as k,
                 (select count(*) from ledger where commit_xid = s.xid and type = any($3::text[])) as rows
          from (select seq, xid, vaults, retracted from stream_commits where seq > $1::int8 order by seq limit $2) s
        ), r as (
          select * from (select n.*, sum(rows) over (order by seq) as upto_rows from n) u
          where k = 1 or upto_rows <= $4::int8
        ), l as materialized (
          select r.seq, ${VAULT_ID} as vault_id, ${LEDGER_ROW_SQL.row},
                 chain_id, vault, block_number, tx_index, log_index, block_hash
          from r join ledger on commit_xid = r.xid and type = any($3::text[])
          where r.rows <= $4::int8
        ), c as (
          select seq, vaults, retracted, rows <= $4::int8 and bytes <= $5::int8 as whole
          from (
            select r.*, coalesce(z.bytes, 0) as bytes, sum(coalesce(z.bytes, 0)) over (order by r.seq) as upto_bytes
            from r left join (select seq, sum(octet_length(json)) as bytes from l group by seq) z using (seq)
          ) u
          where k = 1 or upto_bytes <= $5::int8
        )
        select c.seq::text as seq, c.vaults, c.retracted, c.whole, l.vault_id as vault, l.json
        from c left join l on l.seq = c.seq and c.whole
        order by c.seq, l.vault, l.chain_id, l.block_number, l.tx_index, l.log_index, l.block_hash`,
    values: [after, limit, types, bounds.rows, bounds.bytes],
  });
  const out: StreamCommit[] = [];
  let split: StreamCommit | null = null;
  for (const r of rows) {
    let c = out.at(-1);
    if (c?.seq !== r.seq) {
      c = { seq: r.seq, vaults: r.vaults, rows: [], retracted: [...(r.retracted ?? [])].sort() };
      out.push(c);
      if (!r.whole) split = c;
    }
    if (r.vault !== null && r.json !== null) c.rows.push({ vault: r.vault, json: r.json });
  }
  if (split) split.counts = await streamRowCounts(pool, split.seq, types);
  return out;
}

/** A ledger row's vault id (`eip155:{chainId}:{address}`), as the commits name their vaults. */
const VAULT_ID = `'eip155:' || chain_id || ':' || ${LEDGER_ROW_SQL.vault}`;

const COMMIT_ROWS = `from ledger where commit_xid = (select xid from stream_commits where seq = $1::int8)
  and type = any($2::text[])`;

/** A commit's rows of `types` counted by vault id. */
async function streamRowCounts(
  pool: Pool,
  seq: string,
  types: readonly string[],
): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ vault: string; n: string }>({
    name: 'reader.stream-row-counts',
    text: `select ${VAULT_ID} as vault, count(*)::text as n ${COMMIT_ROWS} group by chain_id, vault`,
    values: [seq, types],
  });
  return new Map(rows.map((r) => [r.vault, Number(r.n)]));
}

/**
 * A slice of a commit's rows of `types` for the vault `id` (a vault id), from the `offset`-th (oldest first): at most
 * `bounds.rows` of them, stopping before the row that would take the slice past `bounds.bytes` of
 * served JSON (UTF-8); the first row comes whatever its size, so a slice always moves on. The
 * vault is matched by its bytes (the ledger's vault indexes find its rows), not by its hex text
 * (which read every row of the commit for each slice: a replay of a commit of n vaults read it n times).
 */
export async function streamRows(
  pool: Pool,
  seq: string,
  id: string,
  offset: number,
  bounds: StreamPageBounds,
  types: readonly string[],
): Promise<string[]> {
  const { chainId, vault } = refOf(id);
  const { rows } = await pool.query<{ json: string }>({
    name: 'reader.stream-rows',
    text: `select json from (
        select json, row_number() over o as k, sum(octet_length(json)) over o as upto
        from (
          select ${LEDGER_ROW_SQL.row}, block_number, tx_index, log_index, block_hash
          ${COMMIT_ROWS} and chain_id = $7::int and vault = ${hexToBytes('$3')}
          order by block_number, tx_index, log_index, block_hash offset $4 limit $5
        ) r
        window o as (order by block_number, tx_index, log_index, block_hash rows unbounded preceding)
      ) s where k = 1 or upto <= $6::int8
      order by k`,
    values: [seq, types, vault, offset, bounds.rows, bounds.bytes, chainId],
  });
  return rows.map((r) => r.json);
}
