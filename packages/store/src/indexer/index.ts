import { type Pool, type PoolClient, withTransaction } from '../pool/index.js';

/** Last block whose records Kafka acknowledged (and whose state is saved). */
export interface IndexerCheckpoint {
  blockNumber: number;
  blockHash: string;
}

/** A block of the kept window, with the vaults that had a record published in it. */
export interface StoredBlock {
  blockNumber: number;
  blockHash: string;
  parentHash: string;
  blockTimestamp: number;
  vaults: string[];
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

export interface IndexerSnapshot {
  checkpoint: IndexerCheckpoint | null;
  /** Kept blocks, highest first (may include write-ahead rows above the checkpoint). */
  blocks: StoredBlock[];
  vaults: StoredIndexerVault[];
}

export interface IndexerCommit {
  checkpoint: IndexerCheckpoint;
  /** New or changed vaults (upserted whole). */
  vaults: readonly StoredIndexerVault[];
  /** Kept blocks below this number are dropped (the window slides). */
  pruneBelow?: number;
}

export interface IndexerRewind {
  /** The common ancestor: the new checkpoint; kept blocks above it are deleted. */
  ancestor: IndexerCheckpoint;
  /** Vaults created above this block are deleted from the registry. */
  vaultsCreatedAbove: number;
  /** Surviving vaults whose state changed (upserted whole). */
  vaults: readonly StoredIndexerVault[];
}

export interface IndexerStore {
  load(chainId: number): Promise<IndexerSnapshot>;
  /**
   * Write-ahead, before a batch is published: its kept blocks (with the vaults they touch) and
   * the vaults it creates, so a reorg found after a crash can still revert them.
   */
  saveBlocks(
    chainId: number,
    blocks: readonly StoredBlock[],
    newVaults?: readonly StoredIndexerVault[],
  ): Promise<void>;
  /** After Kafka acknowledged a batch: checkpoint, vault registry and states, in one transaction. */
  commit(chainId: number, c: IndexerCommit): Promise<void>;
  /** After the revert records of a reorg were acknowledged: move everything back to the ancestor. */
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
  await c.query(
    `insert into indexer_vaults (chain_id, vault, created_block, token0, token1, pool, reward_token, state)
     select $1, v, b, t0, t1, p, r, s::jsonb
     from unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
       as u(v, b, t0, t1, p, r, s)
     on conflict (chain_id, vault) do update set
       created_block = excluded.created_block, token0 = excluded.token0, token1 = excluded.token1,
       pool = excluded.pool, reward_token = excluded.reward_token, state = excluded.state`,
    [
      chainId,
      vaults.map((v) => v.vault),
      vaults.map((v) => v.createdBlock),
      vaults.map((v) => v.token0),
      vaults.map((v) => v.token1),
      vaults.map((v) => v.pool),
      vaults.map((v) => v.rewardToken),
      vaults.map((v) => JSON.stringify(v.state)),
    ],
  );
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

async function saveCheckpoint(c: PoolClient, chainId: number, cp: IndexerCheckpoint): Promise<void> {
  await c.query(
    `insert into indexer_checkpoint (chain_id, block_number, block_hash, updated_at) values ($1, $2, $3, now())
     on conflict (chain_id) do update set block_number = excluded.block_number,
       block_hash = excluded.block_hash, updated_at = now()`,
    [chainId, cp.blockNumber, cp.blockHash],
  );
}

/** SQL of the indexer: checkpoint, kept block window, vault registry, bad logs. */
export function createIndexerStore(pool: Pool): IndexerStore {
  return {
    async load(chainId) {
      const [cp, blocks, vaults] = await Promise.all([
        pool.query<{ block_number: number; block_hash: string }>(
          'select block_number, block_hash from indexer_checkpoint where chain_id = $1',
          [chainId],
        ),
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
        pool.query<{
          vault: string;
          created_block: number;
          token0: string;
          token1: string;
          pool: string;
          reward_token: string;
          state: unknown;
        }>(
          `select vault, created_block, token0, token1, pool, reward_token, state from indexer_vaults
           where chain_id = $1 order by created_block, vault`,
          [chainId],
        ),
      ]);
      const c = cp.rows[0];
      return {
        checkpoint: c ? { blockNumber: Number(c.block_number), blockHash: c.block_hash } : null,
        blocks: blocks.rows.map((b) => ({
          blockNumber: Number(b.block_number),
          blockHash: b.block_hash,
          parentHash: b.parent_hash,
          blockTimestamp: Number(b.block_timestamp),
          vaults: b.vaults,
        })),
        vaults: vaults.rows.map((v) => ({
          vault: v.vault,
          createdBlock: Number(v.created_block),
          token0: v.token0,
          token1: v.token1,
          pool: v.pool,
          rewardToken: v.reward_token,
          state: v.state,
        })),
      };
    },

    async saveBlocks(chainId, blocks, newVaults = []) {
      if (blocks.length === 0 && newVaults.length === 0) return;
      await withTransaction(pool, async (client) => {
        await upsertVaults(client, chainId, newVaults);
        if (blocks.length > 0) await insertBlocks(client, chainId, blocks);
      });
    },

    async commit(chainId, c) {
      await withTransaction(pool, async (client) => {
        await upsertVaults(client, chainId, c.vaults);
        await saveCheckpoint(client, chainId, c.checkpoint);
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
        await client.query('delete from indexer_vaults where chain_id = $1 and created_block > $2', [
          chainId,
          r.vaultsCreatedAbove,
        ]);
        await upsertVaults(client, chainId, r.vaults);
        await saveCheckpoint(client, chainId, r.ancestor);
      });
    },

    async dropBlocks(chainId, blockHashes) {
      if (blockHashes.length === 0) return;
      await pool.query('delete from indexer_blocks where chain_id = $1 and block_hash = any($2::text[])', [
        chainId,
        [...blockHashes],
      ]);
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
