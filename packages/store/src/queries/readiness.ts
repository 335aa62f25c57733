import { appliedVersions, latestVersion } from '../migrations/index.js';
import { ident, type Pool } from '../pool/index.js';

export interface Readiness {
  /** Highest migration applied to the schema (0 when never migrated). */
  applied: number;
  /** Highest migration this code ships. */
  expected: number;
  /** Every shipped migration is applied. */
  current: boolean;
  /** Records the projector could not apply (0 when none, or before migrations). */
  deadLetters: number;
  /** Distinct vaults those records belong to (their snapshots say `behind`). */
  vaultsBehind: number;
}

/** Throws when Postgres does not answer; otherwise reports the schema's migration state. */
export async function readiness(pool: Pool, schema: string): Promise<Readiness> {
  const versions = await appliedVersions(pool, schema);
  const expected = latestVersion();
  const applied = versions.at(-1) ?? 0;
  let deadLetters = 0;
  let vaultsBehind = 0;
  if (applied >= 9) {
    const { rows } = await pool.query<{ n: number; v: number }>(
      `select count(*)::int as n, count(distinct vault)::int as v from ${ident(schema)}.dead_letters`,
    );
    deadLetters = rows[0]?.n ?? 0;
    vaultsBehind = rows[0]?.v ?? 0;
  }
  return { applied, expected, current: applied >= expected, deadLetters, vaultsBehind };
}

/** The newest block the indexer of a chain published (its checkpoint), with that block's time when kept. */
export interface IndexerHead {
  chainId: number;
  blockNumber: number;
  /** Unix ms of the block (from the indexer's kept blocks); null when not kept. */
  blockTime: number | null;
}

/**
 * How far a projection is behind the log and the chain (see `projectionFreshness`). Every figure
 * is null when it cannot be known from what was given (no high watermarks, no readable
 * checkpoint, nothing folded yet).
 */
export interface Freshness {
  /** Records in the topic not yet folded: Σ over partitions of high watermark − stored next offset. */
  records: number | null;
  /**
   * Blocks between a chain's indexer checkpoint and the newest block folded of that chain's
   * vaults, for the chain furthest behind (`chainId`); 0 when `records` is 0. Block numbers of
   * two chains are never compared (#45).
   */
  blocks: number | null;
  /** Chain time between them, seconds, for that chain (0 when `records` is 0). */
  seconds: number | null;
  /** The newest record folded of that chain (of every vault when no checkpoint is readable): its block and block time (Unix ms). */
  folded: { blockNumber: number | null; blockTime: number | null };
  /** That chain's head as its indexer last published it; null when no checkpoint is readable. */
  head: IndexerHead | null;
  /** The chain the figures are of: the one furthest behind (null: no checkpoint readable). */
  chainId: number | null;
}

type Queryable = Pick<Pool, 'query'>;

/** True when `schema.table` exists and this role may read it (no error either way). */
async function readable(db: Queryable, schema: string, table: string): Promise<boolean> {
  const { rows } = await db.query<{ ok: boolean }>(
    `select coalesce(has_table_privilege(to_regclass($1), 'select'), false) as ok`,
    [`${ident(schema)}.${ident(table)}`],
  );
  return rows[0]?.ok ?? false;
}

/** The indexer's checkpoint in `schema` (the highest over chains), or null when not readable. */
/** Each chain's indexer checkpoint (its head as the indexer last published it), by chain id. */
export async function indexerHeads(db: Queryable, schema: string): Promise<IndexerHead[]> {
  if (!(await readable(db, schema, 'indexer_checkpoint'))) return [];
  const blocks = await readable(db, schema, 'indexer_blocks');
  const s = ident(schema);
  const { rows } = await db.query<{ c: number; n: string; t: string | null }>(
    blocks
      ? `select c.chain_id as c, c.block_number::text as n, b.block_timestamp::text as t from ${s}.indexer_checkpoint c
           left join ${s}.indexer_blocks b on b.chain_id = c.chain_id and b.block_number = c.block_number
                                            and b.block_hash = c.block_hash
          order by c.chain_id`
      : `select chain_id as c, block_number::text as n, null::text as t from ${s}.indexer_checkpoint order by chain_id`,
  );
  // indexer_blocks keeps block times in seconds (0 before migration 0003 filled them).
  return rows.map((r) => {
    const t = r.t === null ? null : Number(r.t);
    return { chainId: r.c, blockNumber: Number(r.n), blockTime: t ? t * 1000 : null };
  });
}

/**
 * How far the projection read through `schema` (a projection schema, or the views schema of the
 * live one) is behind the log and the chain:
 * - `records`: the topic's high watermarks (`high`, read from Kafka by the caller) minus the next
 *   offsets stored with the projection (`consumer_offsets`, the furthest group per partition);
 * - `blocks` / `seconds`: the indexer's checkpoint (`indexerSchema`'s `indexer_checkpoint`, the
 *   chain head as the indexer last published it) minus the newest record folded. Both are 0 when
 *   `records` is 0: a block without records has nothing to fold, so the projection is as fresh
 *   as the log. Without `high` they are an upper bound (quiet blocks count too).
 */
export async function projectionFreshness(
  db: Queryable,
  schema: string,
  o: { topic: string; high: ReadonlyMap<number, bigint> | null; indexerSchema?: string | null },
): Promise<Freshness> {
  let records: number | null = null;
  if (o.high) {
    const { rows } = await db.query<{ partition: number; next: string }>(
      `select partition, max(greatest(next_offset, 0))::text as next from ${ident(schema)}.consumer_offsets
        where topic = $1 group by partition`,
      [o.topic],
    );
    const stored = new Map(rows.map((r) => [r.partition, BigInt(r.next)]));
    let lag = 0n;
    for (const [p, h] of o.high) {
      const s = stored.get(p) ?? 0n;
      if (h > s) lag += h - s;
    }
    records = Number(lag);
  }
  // The newest block folded per chain: a chain's checkpoint is compared with its own vaults only.
  const { rows: f } = await db.query<{ c: number; n: string | null; t: string | null }>(
    `select chain_id as c, max((snapshot->>'blockNumber')::bigint)::text as n, max(updated_at)::text as t
       from ${ident(schema)}.vault_snapshot group by chain_id`,
  );
  const foldedOf = (row: { n: string | null; t: string | null } | undefined) => ({
    blockNumber: row?.n == null ? null : Number(row.n),
    blockTime: row?.t == null ? null : Number(row.t),
  });
  const heads = o.indexerSchema ? await indexerHeads(db, o.indexerSchema) : [];
  if (heads.length === 0) {
    // No checkpoint to compare with: the newest record folded of every vault.
    const newest = f.reduce<(typeof f)[number] | undefined>(
      (a, r) => (a === undefined || Number(r.n ?? -1) > Number(a.n ?? -1) ? r : a),
      undefined,
    );
    const folded = foldedOf(newest);
    if (records === 0) return { records, blocks: 0, seconds: 0, folded, head: null, chainId: null };
    return { records, blocks: null, seconds: null, folded, head: null, chainId: null };
  }
  // Each chain's lag; the chain furthest behind (in seconds where both times are known, else in blocks) is reported.
  let worst: Freshness | null = null;
  for (const head of heads) {
    const folded = foldedOf(f.find((r) => r.c === head.chainId));
    let blocks = 0;
    let seconds: number | null = 0;
    if (records !== 0) {
      blocks = Math.max(0, head.blockNumber - (folded.blockNumber ?? -1));
      seconds =
        head.blockTime !== null && folded.blockTime !== null
          ? Math.max(0, Math.round((head.blockTime - folded.blockTime) / 1000))
          : null;
    }
    const here: Freshness = { records, blocks, seconds, folded, head, chainId: head.chainId };
    if (
      worst === null ||
      (seconds ?? -1) > (worst.seconds ?? -1) ||
      ((seconds ?? -1) === (worst.seconds ?? -1) && blocks > (worst.blocks ?? -1))
    )
      worst = here;
  }
  return worst as Freshness;
}

/** A block of a chain: its number and time (Unix ms; null when the indexer kept no time for it). */
export interface ChainBlock {
  blockNumber: number;
  blockTime: number | null;
}

/** One chain the deployment follows, as `GET /v1/chains` serves it. */
export interface ChainStatus {
  chainId: number;
  /** Vaults served on the chain. */
  vaults: number;
  /**
   * The newest block the indexer has read on the chain (its kept blocks, written ahead of
   * publishing); null when the indexer's tables are not readable or hold nothing for the chain.
   */
  head: ChainBlock | null;
  /** The newest block the indexer published to the log (its checkpoint), with when it was written (Unix ms). */
  checkpoint: (ChainBlock & { updatedAt: number }) | null;
  /** The newest block of the chain folded into the served figures (over its vaults); null before any. */
  folded: ChainBlock | null;
  /**
   * The indexer's lag: `blocks` read but not yet published (head − checkpoint), and `seconds`
   * since the checkpoint block's time (now − its block time: it grows while the chain's node is
   * down or the indexer stopped). Null when not known.
   */
  lag: { blocks: number | null; seconds: number | null };
  /**
   * The served figures' lag behind the checkpoint: blocks (checkpoint − folded) and chain seconds
   * (their block times). Upper bounds: blocks with no record of the chain's vaults count too.
   * Null without a checkpoint or before anything of the chain was folded.
   */
  foldedLag: { blocks: number | null; seconds: number | null };
}

/**
 * Every chain the deployment follows — those with an indexer checkpoint (when `indexerSchema` is
 * given and readable) and those with vaults in `schema` — by ascending chain id, with its head,
 * checkpoint, the newest block folded and the lags between them. `now` is Unix ms.
 */
export async function chainStatuses(
  db: Queryable,
  schema: string,
  o: { indexerSchema?: string | null; now?: number } = {},
): Promise<ChainStatus[]> {
  const now = o.now ?? Date.now();
  const { rows: folded } = await db.query<{
    chain_id: number;
    vaults: number;
    n: string | null;
    t: string | null;
  }>(
    `select chain_id, count(*)::int as vaults, max((snapshot->>'blockNumber')::bigint)::text as n,
        max(updated_at)::text as t
       from ${ident(schema)}.vault_snapshot group by chain_id`,
  );
  const idx = new Map<
    number,
    { cn: string; ct: string | null; cu: string; hn: string | null; ht: string | null }
  >();
  if (o.indexerSchema && (await readable(db, o.indexerSchema, 'indexer_checkpoint'))) {
    const s = ident(o.indexerSchema);
    const blocks = await readable(db, o.indexerSchema, 'indexer_blocks');
    const { rows } = await db.query<{
      chain_id: number;
      cn: string;
      ct: string | null;
      cu: string;
      hn: string | null;
      ht: string | null;
    }>(
      blocks
        ? `select c.chain_id, c.block_number::text as cn, cb.block_timestamp::text as ct,
              (extract(epoch from c.updated_at) * 1000)::bigint::text as cu,
              h.block_number::text as hn, h.block_timestamp::text as ht
             from ${s}.indexer_checkpoint c
             left join ${s}.indexer_blocks cb on cb.chain_id = c.chain_id and cb.block_number = c.block_number
                                               and cb.block_hash = c.block_hash
             left join lateral (
               select b.block_number, b.block_timestamp from ${s}.indexer_blocks b
                where b.chain_id = c.chain_id order by b.block_number desc limit 1
             ) h on true`
        : `select chain_id, block_number::text as cn, null::text as ct,
              (extract(epoch from updated_at) * 1000)::bigint::text as cu, null::text as hn, null::text as ht
             from ${s}.indexer_checkpoint`,
    );
    for (const r of rows) idx.set(r.chain_id, r);
  }
  // indexer_blocks keeps block times in seconds (0 before migration 0003 filled them).
  const ms = (t: string | null | undefined) => (t ? Number(t) * 1000 || null : null);
  const byChain = new Map(folded.map((r) => [r.chain_id, r]));
  const chains = [...new Set([...idx.keys(), ...byChain.keys()])].sort((a, b) => a - b);
  return chains.map((chainId): ChainStatus => {
    const f = byChain.get(chainId);
    const i = idx.get(chainId);
    const checkpoint = i ? { blockNumber: Number(i.cn), blockTime: ms(i.ct), updatedAt: Number(i.cu) } : null;
    const hn = i?.hn == null ? null : Number(i.hn);
    const head =
      checkpoint === null
        ? null
        : hn !== null && hn > checkpoint.blockNumber
          ? { blockNumber: hn, blockTime: ms(i?.ht) }
          : { blockNumber: checkpoint.blockNumber, blockTime: checkpoint.blockTime };
    const foldedBlock =
      f && f.n !== null ? { blockNumber: Number(f.n), blockTime: f.t === null ? null : Number(f.t) } : null;
    const diff = (a: number | null | undefined, b: number | null | undefined) =>
      a == null || b == null ? null : Math.max(0, a - b);
    const seconds = (a: number | null | undefined, b: number | null | undefined) => {
      const d = diff(a, b);
      return d === null ? null : Math.round(d / 1000);
    };
    return {
      chainId,
      vaults: f?.vaults ?? 0,
      head,
      checkpoint,
      folded: foldedBlock,
      lag: {
        blocks: diff(head?.blockNumber, checkpoint?.blockNumber),
        seconds: seconds(now, checkpoint?.blockTime),
      },
      foldedLag: {
        blocks: diff(checkpoint?.blockNumber, foldedBlock?.blockNumber),
        seconds: seconds(checkpoint?.blockTime, foldedBlock?.blockTime),
      },
    };
  });
}
