import { type Pool, withTransaction } from '../pool/index.js';
import { isUniqueViolation, type ProjectionTx, projectionTx } from './tx.js';

export type { CopyBuffer } from './copy.js';
export type * from './rows.js';
export type { RunnerTx } from './runner-tx.js';
export {
  type CommitNotice,
  commitNotice,
  comparePosition,
  equityCopyBuffer,
  isUniqueViolation,
  ledgerCopyBuffer,
  type ProjectionTx,
  STREAM_CHANNEL,
  STREAM_COMMITS_KEPT,
} from './tx.js';
export type { VaultWrites } from './vault-writes.js';

/** The projector's side of the store: batch transactions and the offsets it seeks to. */
export interface ProjectionStore {
  /** Next offsets stored for these partitions (absent = never applied). */
  storedOffsets(groupId: string, topic: string, partitions: readonly number[]): Promise<Map<number, string>>;
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: ProjectionTx) => Promise<T>): Promise<T>;
  /**
   * Marks the group's offsets row of `partition` as written now without moving it: a running
   * projector with nothing to fold stays visible to `rebuild retire`'s quiet check.
   */
  heartbeat(groupId: string, topic: string, partition: number): Promise<void>;
  /** Whether `err` is a unique violation (a `copyLedger` that met a record already there). */
  isUniqueViolation(err: unknown): boolean;
}

export function createProjectionStore(pool: Pool): ProjectionStore {
  return {
    isUniqueViolation,
    async storedOffsets(groupId, topic, partitions) {
      const { rows } = await pool.query<{ partition: number; next_offset: string | number }>(
        `select partition, next_offset from consumer_offsets
         where group_id = $1 and topic = $2 and partition = any($3::int[]) and next_offset >= 0`,
        [groupId, topic, partitions],
      );
      return new Map(rows.map((r) => [r.partition, String(r.next_offset)]));
    },
    async heartbeat(groupId, topic, partition) {
      await pool.query(
        'update consumer_offsets set updated_at = now() where group_id = $1 and topic = $2 and partition = $3',
        [groupId, topic, partition],
      );
    },
    transaction: (fn) => withTransaction(pool, (client) => fn(projectionTx(client))),
  };
}
