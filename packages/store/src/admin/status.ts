import { ident, type Pool } from '../pool/index.js';

type Queryable = Pick<Pool, 'query'>;

export interface StoredOffsetRow {
  groupId: string;
  topic: string;
  partition: number;
  /** Next offset to apply (-1: the partition was claimed but nothing applied yet). */
  nextOffset: string;
  updatedAt: Date;
}

async function hasTable(db: Queryable, schema: string, table: string): Promise<boolean> {
  const { rows } = await db.query<{ ok: boolean }>('select to_regclass($1) is not null as ok', [
    `${ident(schema)}.${ident(table)}`,
  ]);
  return rows[0]?.ok ?? false;
}

/** The offsets stored with a projection schema (every group, or one), by group, topic, partition. */
export async function storedOffsetRows(
  db: Queryable,
  schema: string,
  filter: { groupId?: string; topic?: string } = {},
): Promise<StoredOffsetRow[]> {
  if (!(await hasTable(db, schema, 'consumer_offsets'))) return [];
  const { rows } = await db.query<{
    group_id: string;
    topic: string;
    partition: number;
    next_offset: number | string;
    updated_at: Date;
  }>(
    `select group_id, topic, partition, next_offset, updated_at from ${ident(schema)}.consumer_offsets
     where ($1::text is null or group_id = $1) and ($2::text is null or topic = $2)
     order by group_id, topic, partition`,
    [filter.groupId ?? null, filter.topic ?? null],
  );
  return rows.map((r) => ({
    groupId: r.group_id,
    topic: r.topic,
    partition: r.partition,
    nextOffset: String(r.next_offset),
    updatedAt: r.updated_at,
  }));
}

/** Records applied by a group on a topic: the sum of its stored next offsets. */
export async function appliedCount(
  db: Queryable,
  schema: string,
  groupId: string,
  topic: string,
): Promise<number> {
  if (!(await hasTable(db, schema, 'consumer_offsets'))) return 0;
  const { rows } = await db.query<{ n: string | null }>(
    `select sum(greatest(next_offset, 0))::text as n from ${ident(schema)}.consumer_offsets
     where group_id = $1 and topic = $2`,
    [groupId, topic],
  );
  return Number(rows[0]?.n ?? 0);
}

export interface DeadLetterCount {
  topic: string;
  count: number;
}

export async function deadLetterCounts(db: Queryable, schema: string): Promise<DeadLetterCount[]> {
  if (!(await hasTable(db, schema, 'dead_letters'))) return [];
  const { rows } = await db.query<{ topic: string; n: number }>(
    `select topic, count(*)::int as n from ${ident(schema)}.dead_letters group by topic order by topic`,
  );
  return rows.map((r) => ({ topic: r.topic, count: r.n }));
}

export interface StalePriceRow {
  /** The vault's chain: a vault is (chainId, vault). */
  chainId: number;
  vault: string;
  token: string;
  symbol: string;
  feed: string;
  /** Age of the price at the vault's last record (seconds) and the feed's heartbeat. */
  ageSeconds: number;
  heartbeatSeconds: number;
  /** The vault's snapshot time (Unix ms). */
  updatedAt: number;
}

/**
 * Prices older than their feed's heartbeat in the vaults' current snapshots (the snapshot's
 * `stalePrices`), oldest first; at most `limit` rows.
 */
export async function stalePriceRows(db: Queryable, schema: string, limit = 50): Promise<StalePriceRow[]> {
  if (!(await hasTable(db, schema, 'vault_snapshot'))) return [];
  const { rows } = await db.query<StalePriceRow>(
    `select s.chain_id as "chainId", s.vault, p->>'token' as token, p->>'symbol' as symbol, p->>'feed' as feed,
            (p->>'ageSeconds')::bigint::float8 as "ageSeconds",
            (p->>'heartbeatSeconds')::int as "heartbeatSeconds",
            s.updated_at::float8 as "updatedAt"
       from ${ident(schema)}.vault_snapshot s,
            json_array_elements(coalesce(s.snapshot->'stalePrices', '[]'::json)) p
      order by (p->>'ageSeconds')::bigint desc, s.vault, s.chain_id
      limit $1`,
    [limit],
  );
  return rows.map((r) => ({ ...r, ageSeconds: Number(r.ageSeconds), updatedAt: Number(r.updatedAt) }));
}

/** The fold version a projection's figures were computed with (migration 0015); null before it. */
export async function projectionFoldVersion(db: Queryable, schema: string): Promise<number | null> {
  if (!(await hasTable(db, schema, 'fold_meta'))) return null;
  const { rows } = await db.query<{ v: number }>(`select fold_version as v from ${ident(schema)}.fold_meta`);
  return rows[0]?.v ?? null;
}

/** A vault held behind a gap in its stream (snapshot `behind.gap`). */
export interface HeldVaultRow {
  /** The vault's chain: a vault is (chainId, vault). */
  chainId: number;
  vault: string;
  lastSeq: number | null;
  missingFrom: number | null;
  missingTo: number | null;
  fromBlock: number | null;
  toBlock: number | null;
  held: number;
}

/** Vaults held behind a gap (migration 0010), most held records first; at most `limit`. */
export async function heldVaultRows(db: Queryable, schema: string, limit = 50): Promise<HeldVaultRow[]> {
  if (!(await hasTable(db, schema, 'vault_snapshot'))) return [];
  try {
    // The vault's own letters (same chain: dead_letters.chain_id, migration 0028; a schema before
    // it follows one chain, its letters have none and are the vault's).
    const { rows } = await db.query<{
      chain_id: number;
      vault: string;
      g: Record<string, number> | null;
      held: number;
    }>(
      `select s.chain_id, s.vault, s.snapshot->'behind'->'gap' as g,
              (select count(*)::int from ${ident(schema)}.dead_letters d
                where d.vault = s.vault and d.kind = 'gap'
                  and coalesce((to_jsonb(d) ->> 'chain_id')::int, s.chain_id) = s.chain_id) as held
         from ${ident(schema)}.vault_snapshot s where s.held
        order by held desc, s.vault, s.chain_id limit $1`,
      [limit],
    );
    return rows.map((r) => ({
      chainId: r.chain_id,
      vault: r.vault,
      lastSeq: r.g?.lastSeq ?? null,
      missingFrom: r.g?.missingFrom ?? null,
      missingTo: r.g?.missingTo ?? null,
      fromBlock: r.g?.fromBlock ?? null,
      toBlock: r.g?.toBlock ?? null,
      held: r.held,
    }));
  } catch (err) {
    // Not migrated to 0010 yet: nothing can be held.
    if ((err as { code?: string }).code === '42703') return [];
    throw err;
  }
}

export interface DeadLetterEntry {
  id: number;
  topic: string;
  partition: number;
  offset: string;
  /** The vault (message key); null when unknown or written before migration 0009. */
  vault: string | null;
  /**
   * The vault's chain (a vault is (chainId, vault)); null when its record did not decode, or
   * written before migration 0028.
   */
  chainId: number | null;
  /** decode | envelope | fold; null before migration 0009. */
  kind: string | null;
  reason: string;
  createdAt: Date;
}

/** The schema's dead letters in log order (topic, partition, offset), at most `limit`. */
export async function listDeadLetters(
  db: Queryable,
  schema: string,
  limit = 1000,
): Promise<DeadLetterEntry[]> {
  if (!(await hasTable(db, schema, 'dead_letters'))) return [];
  // vault, chain_id and kind through to_jsonb: a schema not migrated to 0009 (0028) reads them as null.
  const { rows } = await db.query<{
    id: string;
    topic: string;
    partition: number;
    offset: string;
    vault: string | null;
    chain_id: number | null;
    kind: string | null;
    reason: string;
    created_at: Date;
  }>(
    `select id::text, topic, partition, "offset"::text as offset, to_jsonb(d) ->> 'vault' as vault,
            (to_jsonb(d) ->> 'chain_id')::int as chain_id, to_jsonb(d) ->> 'kind' as kind, reason, created_at
     from ${ident(schema)}.dead_letters d order by topic, partition, "offset" limit $1`,
    [limit],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    topic: r.topic,
    partition: r.partition,
    offset: r.offset,
    vault: r.vault,
    chainId: r.chain_id,
    kind: r.kind,
    reason: r.reason,
    createdAt: r.created_at,
  }));
}

export interface IndexerCheckpointRow {
  chainId: number;
  blockNumber: number;
  blockHash: string;
  /** The Kafka topic it is the checkpoint of; null when written before migration 0008. */
  topic: string | null;
  updatedAt: Date;
}

export async function indexerCheckpoints(db: Queryable, schema: string): Promise<IndexerCheckpointRow[]> {
  if (!(await hasTable(db, schema, 'indexer_checkpoint'))) return [];
  // The topic through to_jsonb: a schema not migrated to 0008 (an old namespace, a retired
  // schema) has no such column, and reads as null instead of failing.
  const { rows } = await db.query<{
    chain_id: number;
    block_number: number;
    block_hash: string;
    topic: string | null;
    updated_at: Date;
  }>(
    `select chain_id, block_number, block_hash, to_jsonb(c) ->> 'topic' as topic, updated_at
     from ${ident(schema)}.indexer_checkpoint c order by chain_id`,
  );
  return rows.map((r) => ({
    chainId: r.chain_id,
    blockNumber: Number(r.block_number),
    blockHash: r.block_hash,
    topic: r.topic,
    updatedAt: r.updated_at,
  }));
}
