import { type Pool, type PoolClient, pgArrayOf, withTransaction } from '../pool/index.js';
import {
  compactIntoSpans,
  DEFAULT_SPAN_LIMITS,
  packMarks,
  type SeqRow,
  type SpanLimits,
  type StoredVaultSeqSpan,
  unpackMarks,
} from './spans.js';

export { DEFAULT_SPAN_LIMITS, type SpanLimits, type StoredVaultSeqSpan } from './spans.js';

/** Last block whose records Kafka acknowledged (and whose state is saved). */
export interface IndexerCheckpoint {
  blockNumber: number;
  blockHash: string;
}

/** A checkpoint as stored, with the Kafka topic it is the checkpoint of. */
export interface StoredCheckpoint extends IndexerCheckpoint {
  /** null: written before migration 0008 (the indexer adopts it; its next checkpoint sets it). */
  topic: string | null;
}

/** A block of the kept window, with the vaults that had a record published in it. */
export interface StoredBlock {
  blockNumber: number;
  blockHash: string;
  parentHash: string;
  blockTimestamp: number;
  vaults: string[];
}

/** The sequence numbers the indexer gave a vault's records in one block (first..last). */
export interface StoredVaultSeq {
  vault: string;
  blockNumber: number;
  blockHash: string;
  firstSeq: number;
  lastSeq: number;
  /**
   * Whether the block's one record is the vault's `mark` (written by the indexer, for compaction:
   * a mark cannot be recounted from the chain). Not read back; unknown when absent.
   */
  mark?: boolean;
}

/** What one compaction of the sequence rows did (IndexerStore.compactSeqs). */
export interface SeqCompaction {
  /** Rows compacted into spans (and deleted). */
  rows: number;
  /** Spans written (new or extended). */
  spans: number;
  /** True when `maxRows` stopped it: rows below the block are left for the next call. */
  more: boolean;
}

/** A vault the indexer knows, with its opaque mark state (JSON the indexer owns). */
export interface StoredIndexerVault {
  vault: string;
  createdBlock: number;
  token0: string;
  token1: string;
  pool: string;
  rewardToken: string;
  state: unknown;
}

export interface BadLogRow {
  chainId: number;
  blockNumber: number;
  blockHash: string;
  txHash: string;
  logIndex: number;
  address: string;
  topic0: string | null;
  reason: string;
  log: unknown;
}

/** What the indexer stored of its progress: its checkpoint, the blocks it keeps, the vaults it found. */
export interface IndexerProgress {
  checkpoint: StoredCheckpoint | null;
  /** Kept blocks, highest first (may include write-ahead rows above the checkpoint). */
  blocks: StoredBlock[];
  vaults: StoredIndexerVault[];
}

export interface IndexerCommit {
  checkpoint: IndexerCheckpoint;
  /** The topic the batch was published to: saved with the checkpoint. */
  topic: string;
  /** New or changed vaults (upserted whole). */
  vaults: readonly StoredIndexerVault[];
  /** Kept blocks below this number are dropped (the window slides). */
  pruneBelow?: number;
}

export interface IndexerRewind {
  /** The common ancestor: the new checkpoint; kept blocks above it are deleted. */
  ancestor: IndexerCheckpoint;
  /** The topic the revert records were published to: saved with the checkpoint. */
  topic: string;
  /** Vaults created above this block are deleted from the registry. */
  vaultsCreatedAbove: number;
  /** Surviving vaults whose state changed (upserted whole). */
  vaults: readonly StoredIndexerVault[];
}

export interface IndexerStore {
  load(chainId: number): Promise<IndexerProgress>;
  /** The stored checkpoint alone (null when none): what start() checks before it touches Kafka. */
  checkpoint(chainId: number): Promise<StoredCheckpoint | null>;
  /**
   * Write-ahead, before a batch is published: its kept blocks (with the vaults they touch) and
   * the vaults it creates, so a reorg found after a crash can still revert them.
   */
  saveBlocks(
    chainId: number,
    blocks: readonly StoredBlock[],
    newVaults?: readonly StoredIndexerVault[],
    seqs?: readonly StoredVaultSeq[],
  ): Promise<void>;
  /** The vaults' sequence rows above a block (a reorg's orphaned blocks, write-ahead included). */
  seqsAbove(chainId: number, block: number): Promise<StoredVaultSeq[]>;
  /**
   * One vault's sequence rows in a block range, ascending (what `vault-yield republish`
   * re-derives): the rows not yet compacted, the reorg window's at least (see vaultSeqSpans).
   */
  vaultSeqs(chainId: number, vault: string, fromBlock: number, toBlock: number): Promise<StoredVaultSeq[]>;
  /** One vault's compacted spans that overlap a block range, ascending. */
  vaultSeqSpans(
    chainId: number,
    vault: string,
    fromBlock: number,
    toBlock: number,
  ): Promise<StoredVaultSeqSpan[]>;
  /**
   * Folds the sequence rows below `belowBlock` (below the reorg window: no rewind reaches them)
   * into the vaults' spans, at most `maxRows` rows (lowest vaults and blocks first), in one
   * transaction: what `republish` needs of them, a row per run of numbers instead of a row per
   * block (spans.ts).
   */
  compactSeqs(
    chainId: number,
    belowBlock: number,
    opts?: { maxRows?: number; limits?: SpanLimits },
  ): Promise<SeqCompaction>;
  /** A vault of the registry (null when unknown). */
  vault(chainId: number, vault: string): Promise<StoredIndexerVault | null>;
  /**
   * After Kafka acknowledged a batch: checkpoint (with its topic), vault registry and states, in
   * one transaction. Throws, writing nothing, when the stored checkpoint is of another topic.
   */
  commit(chainId: number, c: IndexerCommit): Promise<void>;
  /**
   * After the revert records of a reorg were acknowledged: move everything back to the ancestor.
   * Throws, writing nothing, when the stored checkpoint is of another topic.
   */
  rewind(chainId: number, r: IndexerRewind): Promise<void>;
  /** Drops the kept blocks with these hashes (orphaned write-ahead rows above the checkpoint). */
  dropBlocks(chainId: number, blockHashes: readonly string[]): Promise<void>;
  recordBadLog(row: BadLogRow): Promise<void>;
  badLogs(chainId: number): Promise<BadLogRow[]>;
}

async function upsertVaults(
  c: PoolClient,
  chainId: number,
  vaults: readonly StoredIndexerVault[],
): Promise<void> {
  if (vaults.length === 0) return;
  // Every vault's state each batch: the states go as one JSON array, matched to the other columns
  // by position (no per-vault text quoted again into an array literal). A missing state would go
  // as JSON null past the column's `not null`: refused here instead.
  const states = vaults.map((v) => {
    if (v.state === undefined) throw new TypeError(`indexer vault ${v.vault}: no state to save`);
    return v.state;
  });
  await c.query(
    `insert into indexer_vaults (chain_id, vault, created_block, token0, token1, pool, reward_token, state)
     select $1, v, b, t0, t1, p, r, s
     from unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])
       with ordinality as u(v, b, t0, t1, p, r, i)
     join jsonb_array_elements($8::jsonb) with ordinality as j(s, i) using (i)
     on conflict (chain_id, vault) do update set
       created_block = excluded.created_block, token0 = excluded.token0, token1 = excluded.token1,
       pool = excluded.pool, reward_token = excluded.reward_token, state = excluded.state`,
    [
      chainId,
      pgArrayOf(vaults, (v) => v.vault),
      pgArrayOf(vaults, (v) => v.createdBlock),
      pgArrayOf(vaults, (v) => v.token0),
      pgArrayOf(vaults, (v) => v.token1),
      pgArrayOf(vaults, (v) => v.pool),
      pgArrayOf(vaults, (v) => v.rewardToken),
      JSON.stringify(states),
    ],
  );
}

async function insertSeqs(c: PoolClient, chainId: number, seqs: readonly StoredVaultSeq[]): Promise<void> {
  await c.query(
    `insert into indexer_vault_seqs (chain_id, vault, block_number, block_hash, first_seq, last_seq, mark)
     select $1, v, n, h, f, l, m
     from unnest($2::text[], $3::int8[], $4::text[], $5::int8[], $6::int8[], $7::bool[]) as u(v, n, h, f, l, m)
     on conflict (chain_id, vault, block_number) do update set block_hash = excluded.block_hash,
       first_seq = excluded.first_seq, last_seq = excluded.last_seq, mark = excluded.mark`,
    [
      chainId,
      // A block's rows, one per vault that moved in it: literals joined once (see pgArray).
      pgArrayOf(seqs, (r) => r.vault),
      pgArrayOf(seqs, (r) => r.blockNumber),
      pgArrayOf(seqs, (r) => r.blockHash),
      pgArrayOf(seqs, (r) => r.firstSeq),
      pgArrayOf(seqs, (r) => r.lastSeq),
      pgArrayOf(seqs, (r) => r.mark),
    ],
  );
}

/** A span row as read (int8 as text, marks packed). */
interface SpanRow {
  vault: string;
  from_block: string;
  to_block: string;
  to_hash: string;
  first_seq: string;
  last_seq: string;
  blocks: number;
  marks: Buffer;
}
const SPAN_COLUMNS =
  'vault, from_block::text, to_block::text, to_hash, first_seq::text, last_seq::text, blocks, marks';
const storedSpan = (r: SpanRow): StoredVaultSeqSpan => ({
  vault: r.vault,
  fromBlock: Number(r.from_block),
  toBlock: Number(r.to_block),
  toHash: r.to_hash,
  firstSeq: Number(r.first_seq),
  lastSeq: Number(r.last_seq),
  blocks: r.blocks,
  marks: unpackMarks(Number(r.from_block), r.marks),
});

async function upsertSpans(
  c: PoolClient,
  chainId: number,
  spans: readonly StoredVaultSeqSpan[],
): Promise<void> {
  if (spans.length === 0) return;
  await c.query(
    `insert into indexer_vault_seq_spans
       (chain_id, vault, from_block, to_block, to_hash, first_seq, last_seq, blocks, marks, mark_count)
     select $1, v, f, t, h, fs, ls, b, m, mc
     from unnest($2::text[], $3::int8[], $4::int8[], $5::text[], $6::int8[], $7::int8[], $8::int4[],
       $9::bytea[], $10::int4[]) as u(v, f, t, h, fs, ls, b, m, mc)
     on conflict (chain_id, vault, from_block) do update set to_block = excluded.to_block,
       to_hash = excluded.to_hash, first_seq = excluded.first_seq, last_seq = excluded.last_seq,
       blocks = excluded.blocks, marks = excluded.marks, mark_count = excluded.mark_count`,
    [
      chainId,
      pgArrayOf(spans, (s) => s.vault),
      pgArrayOf(spans, (s) => s.fromBlock),
      pgArrayOf(spans, (s) => s.toBlock),
      pgArrayOf(spans, (s) => s.toHash),
      pgArrayOf(spans, (s) => s.firstSeq),
      pgArrayOf(spans, (s) => s.lastSeq),
      pgArrayOf(spans, (s) => s.blocks),
      spans.map((s) => packMarks(s.fromBlock, s.marks)),
      pgArrayOf(spans, (s) => s.marks.length),
    ],
  );
}

/** One compaction (compactSeqs): rows below the block into spans, rows deleted, one transaction. */
async function compact(
  c: PoolClient,
  chainId: number,
  below: number,
  maxRows: number,
  limits: SpanLimits,
): Promise<SeqCompaction> {
  const { rows } = await c.query<{
    vault: string;
    n: string;
    h: string;
    f: string;
    l: string;
    m: boolean | null;
  }>(
    `select vault, block_number::text as n, block_hash as h, first_seq::text as f, last_seq::text as l, mark as m
     from indexer_vault_seqs where chain_id = $1 and block_number < $2
     order by vault, block_number limit $3`,
    [chainId, below, maxRows],
  );
  if (rows.length === 0) return { rows: 0, spans: 0, more: false };
  const byVault = new Map<string, SeqRow[]>();
  for (const r of rows) {
    const list = byVault.get(r.vault) ?? [];
    byVault.set(r.vault, list);
    list.push({
      vault: r.vault,
      blockNumber: Number(r.n),
      blockHash: r.h,
      firstSeq: Number(r.f),
      lastSeq: Number(r.l),
      mark: r.m,
    });
  }
  const vaults = [...byVault.keys()];
  const { rows: lasts } = await c.query<SpanRow>(
    `select distinct on (vault) ${SPAN_COLUMNS} from indexer_vault_seq_spans
     where chain_id = $1 and vault = any($2::text[]) order by vault, from_block desc`,
    [chainId, vaults],
  );
  const lastOf = new Map(lasts.map((r) => [r.vault, storedSpan(r)]));
  const spans: StoredVaultSeqSpan[] = [];
  for (const [vault, list] of byVault)
    spans.push(...compactIntoSpans(lastOf.get(vault) ?? null, list, limits));
  await upsertSpans(c, chainId, spans);
  await c.query(
    `delete from indexer_vault_seqs s using unnest($2::text[], $3::int8[]) as d(v, n)
     where s.chain_id = $1 and s.vault = d.v and s.block_number = d.n`,
    [chainId, pgArrayOf(rows, (r) => r.vault), pgArrayOf(rows, (r) => r.n)],
  );
  return { rows: rows.length, spans: spans.length, more: rows.length === maxRows };
}

async function readSeqs(pool: Pool, where: string, params: unknown[]): Promise<StoredVaultSeq[]> {
  const { rows } = await pool.query<{ vault: string; n: string; h: string; f: string; l: string }>(
    `select vault, block_number::text as n, block_hash as h, first_seq::text as f, last_seq::text as l
     from indexer_vault_seqs where ${where} order by vault, block_number`,
    params,
  );
  return rows.map((r) => ({
    vault: r.vault,
    blockNumber: Number(r.n),
    blockHash: r.h,
    firstSeq: Number(r.f),
    lastSeq: Number(r.l),
  }));
}

async function insertBlocks(c: PoolClient, chainId: number, blocks: readonly StoredBlock[]): Promise<void> {
  await c.query(
    `insert into indexer_blocks (chain_id, block_number, block_hash, parent_hash, block_timestamp, vaults)
     select $1, n, h, p, t, array(select jsonb_array_elements_text(vj::jsonb))
     from unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[]) as u(n, h, p, t, vj)
     on conflict (chain_id, block_number) do update set block_hash = excluded.block_hash,
       parent_hash = excluded.parent_hash, block_timestamp = excluded.block_timestamp, vaults = excluded.vaults`,
    [
      chainId,
      blocks.map((b) => b.blockNumber),
      blocks.map((b) => b.blockHash),
      blocks.map((b) => b.parentHash),
      blocks.map((b) => b.blockTimestamp),
      blocks.map((b) => JSON.stringify(b.vaults)),
    ],
  );
}

/**
 * Saves the checkpoint with its topic. A row without a topic (written before migration 0008) is
 * adopted; a row of another topic is never overwritten (the indexer refuses it at start: this
 * guards a second indexer that raced it), so the transaction fails instead.
 */
async function saveCheckpoint(
  c: PoolClient,
  chainId: number,
  cp: IndexerCheckpoint,
  topic: string,
): Promise<void> {
  const { rowCount } = await c.query(
    `insert into indexer_checkpoint (chain_id, block_number, block_hash, topic, updated_at) values ($1, $2, $3, $4, now())
     on conflict (chain_id) do update set block_number = excluded.block_number,
       block_hash = excluded.block_hash, topic = excluded.topic, updated_at = now()
     where indexer_checkpoint.topic is null or indexer_checkpoint.topic = excluded.topic`,
    [chainId, cp.blockNumber, cp.blockHash, topic],
  );
  if (rowCount === 0) {
    const { rows } = await c.query<{ topic: string }>(
      'select topic from indexer_checkpoint where chain_id = $1',
      [chainId],
    );
    throw new Error(
      `the checkpoint of chain ${chainId} is of topic ${rows[0]?.topic}, not ${topic}: not overwritten ` +
        '(another indexer writes this schema with another topic)',
    );
  }
}

async function readCheckpoint(pool: Pool, chainId: number): Promise<StoredCheckpoint | null> {
  try {
    const { rows } = await pool.query<{ block_number: number; block_hash: string; topic: string | null }>(
      'select block_number, block_hash, topic from indexer_checkpoint where chain_id = $1',
      [chainId],
    );
    const r = rows[0];
    return r ? { blockNumber: Number(r.block_number), blockHash: r.block_hash, topic: r.topic } : null;
  } catch (err) {
    // A schema not migrated to 0008: say what to do, not only which column is missing.
    if ((err as { code?: string }).code === '42703' && /\btopic\b/.test((err as Error).message))
      throw new Error(
        'indexer_checkpoint has no topic column: the schema predates migration 0008; migrate it (vault-yield migrate) first',
        { cause: err },
      );
    throw err;
  }
}

/** SQL of the indexer: checkpoint, kept block window, vault registry, bad logs. */
/** An indexer_vaults row as read (created_block as text: int8). */
interface VaultRow {
  vault: string;
  created_block: string;
  token0: string;
  token1: string;
  pool: string;
  reward_token: string;
  state: unknown;
}
const VAULT_COLUMNS = 'vault, created_block::text, token0, token1, pool, reward_token, state';
const storedVault = (v: VaultRow): StoredIndexerVault => ({
  vault: v.vault,
  createdBlock: Number(v.created_block),
  token0: v.token0,
  token1: v.token1,
  pool: v.pool,
  rewardToken: v.reward_token,
  state: v.state,
});

export function createIndexerStore(pool: Pool): IndexerStore {
  return {
    async load(chainId) {
      const [cp, blocks, vaults] = await Promise.all([
        readCheckpoint(pool, chainId),
        pool.query<{
          block_number: number;
          block_hash: string;
          parent_hash: string;
          block_timestamp: number;
          vaults: string[];
        }>(
          `select block_number, block_hash, parent_hash, block_timestamp, vaults from indexer_blocks
           where chain_id = $1 order by block_number desc`,
          [chainId],
        ),
        pool.query<VaultRow>(
          `select ${VAULT_COLUMNS} from indexer_vaults
           where chain_id = $1 order by indexer_vaults.created_block, vault`,
          [chainId],
        ),
      ]);
      return {
        checkpoint: cp,
        blocks: blocks.rows.map((b) => ({
          blockNumber: Number(b.block_number),
          blockHash: b.block_hash,
          parentHash: b.parent_hash,
          blockTimestamp: Number(b.block_timestamp),
          vaults: b.vaults,
        })),
        vaults: vaults.rows.map(storedVault),
      };
    },

    checkpoint: (chainId) => readCheckpoint(pool, chainId),

    async saveBlocks(chainId, blocks, newVaults = [], seqs = []) {
      if (blocks.length === 0 && newVaults.length === 0 && seqs.length === 0) return;
      await withTransaction(pool, async (client) => {
        await upsertVaults(client, chainId, newVaults);
        if (blocks.length > 0) await insertBlocks(client, chainId, blocks);
        if (seqs.length > 0) await insertSeqs(client, chainId, seqs);
      });
    },

    seqsAbove: (chainId, block) => readSeqs(pool, 'chain_id = $1 and block_number > $2', [chainId, block]),

    vaultSeqs: (chainId, vault, fromBlock, toBlock) =>
      readSeqs(pool, 'chain_id = $1 and vault = $2 and block_number between $3 and $4', [
        chainId,
        vault.toLowerCase(),
        fromBlock,
        toBlock,
      ]),

    async vaultSeqSpans(chainId, vault, fromBlock, toBlock) {
      const { rows } = await pool.query<SpanRow>(
        `select ${SPAN_COLUMNS} from indexer_vault_seq_spans
         where chain_id = $1 and vault = $2 and to_block >= $3 and from_block <= $4 order by from_block`,
        [chainId, vault.toLowerCase(), fromBlock, toBlock],
      );
      return rows.map(storedSpan);
    },

    compactSeqs: (chainId, belowBlock, opts = {}) =>
      withTransaction(pool, (client) =>
        compact(client, chainId, belowBlock, opts.maxRows ?? 20_000, opts.limits ?? DEFAULT_SPAN_LIMITS),
      ),

    async vault(chainId, vault) {
      const { rows } = await pool.query<VaultRow>(
        `select ${VAULT_COLUMNS} from indexer_vaults where chain_id = $1 and vault = $2`,
        [chainId, vault.toLowerCase()],
      );
      return rows[0] ? storedVault(rows[0]) : null;
    },

    async commit(chainId, c) {
      await withTransaction(pool, async (client) => {
        await upsertVaults(client, chainId, c.vaults);
        await saveCheckpoint(client, chainId, c.checkpoint, c.topic);
        if (c.pruneBelow !== undefined) {
          await client.query('delete from indexer_blocks where chain_id = $1 and block_number < $2', [
            chainId,
            c.pruneBelow,
          ]);
        }
      });
    },

    async rewind(chainId, r) {
      await withTransaction(pool, async (client) => {
        await client.query('delete from indexer_blocks where chain_id = $1 and block_number > $2', [
          chainId,
          r.ancestor.blockNumber,
        ]);
        await client.query('delete from indexer_vault_seqs where chain_id = $1 and block_number > $2', [
          chainId,
          r.ancestor.blockNumber,
        ]);
        await client.query('delete from indexer_vaults where chain_id = $1 and created_block > $2', [
          chainId,
          r.vaultsCreatedAbove,
        ]);
        await upsertVaults(client, chainId, r.vaults);
        await saveCheckpoint(client, chainId, r.ancestor, r.topic);
      });
    },

    async dropBlocks(chainId, blockHashes) {
      if (blockHashes.length === 0) return;
      await pool.query('delete from indexer_blocks where chain_id = $1 and block_hash = any($2::text[])', [
        chainId,
        [...blockHashes],
      ]);
      await pool.query(
        'delete from indexer_vault_seqs where chain_id = $1 and block_hash = any($2::text[])',
        [chainId, [...blockHashes]],
      );
    },

    async recordBadLog(row) {
      await pool.query(
        `insert into indexer_bad_logs (chain_id, block_number, block_hash, tx_hash, log_index, address, topic0, reason, log)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)
         on conflict (chain_id, block_hash, log_index) do update set reason = excluded.reason, last_seen = now()`,
        [
          row.chainId,
          row.blockNumber,
          row.blockHash,
          row.txHash,
          row.logIndex,
          row.address,
          row.topic0,
          row.reason,
          JSON.stringify(row.log),
        ],
      );
    },

    async badLogs(chainId) {
      const { rows } = await pool.query<{
        chain_id: number;
        block_number: number;
        block_hash: string;
        tx_hash: string;
        log_index: number;
        address: string;
        topic0: string | null;
        reason: string;
        log: unknown;
      }>('select * from indexer_bad_logs where chain_id = $1 order by block_number, log_index', [chainId]);
      return rows.map((r) => ({
        chainId: r.chain_id,
        blockNumber: Number(r.block_number),
        blockHash: r.block_hash,
        txHash: r.tx_hash,
        logIndex: r.log_index,
        address: r.address,
        topic0: r.topic0,
        reason: r.reason,
        log: r.log,
      }));
    },
  };
}
