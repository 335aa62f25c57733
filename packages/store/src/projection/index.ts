import { type Pool, withTransaction } from '../pool/index.js';
import { isUniqueViolation, type ProjectionTx, projectionTx } from './tx.js';

export type * from './rows.js';
export { comparePosition, isUniqueViolation, type ProjectionTx } from './tx.js';

/** The projector's side of the store: batch transactions and the offsets it seeks to. */
export interface ProjectionStore {
  /** Next offsets stored for these partitions (absent = never applied). */
  storedOffsets(groupId: string, topic: string, partitions: readonly number[]): Promise<Map<number, string>>;
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: ProjectionTx) => Promise<T>): Promise<T>;
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
    transaction: (fn) => withTransaction(pool, (client) => fn(projectionTx(client))),
  };
}
