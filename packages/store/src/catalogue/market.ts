import type { ScreenResult, StrategyCatalogue } from '@vault-yield/domain';
import { type Pool, withTransaction } from '../pool/index.js';
import { createProjectionStore } from '../projection/index.js';
import type { DeadLetterRow, PartitionOffset } from '../projection/rows.js';
import { projectionTx } from '../projection/tx.js';
import { type ApplyOutcome, applyScreen } from './screen.js';
import { applyCatalogue } from './strategies.js';

export type MarketItem = { offset: string } & (
  | { kind: 'screen'; value: ScreenResult }
  | { kind: 'catalogue'; value: StrategyCatalogue }
  | { kind: 'dead'; letter: DeadLetterRow }
);

/** The market topics' side of the store: same offset bookkeeping as the vault projector. */
export interface MarketStore {
  storedOffsets(groupId: string, topic: string, partitions: readonly number[]): Promise<Map<number, string>>;
  /**
   * Applies a batch in one transaction with its partition's next offset. Items below the stored
   * offset (applied before, e.g. by an instance that held the partition) are skipped.
   */
  applyBatch(
    commit: PartitionOffset,
    items: readonly MarketItem[],
  ): Promise<(ApplyOutcome | 'dead' | 'skipped')[]>;
}

export function createMarketStore(pool: Pool): MarketStore {
  const projection = createProjectionStore(pool);
  return {
    storedOffsets: projection.storedOffsets,
    applyBatch: (commit, items) =>
      withTransaction(pool, async (client) => {
        const tx = projectionTx(client);
        const stored = BigInt(
          (await tx.lockPartition(commit.groupId, commit.topic, commit.partition)) ?? '0',
        );
        const outcomes: (ApplyOutcome | 'dead' | 'skipped')[] = [];
        const dead: DeadLetterRow[] = [];
        for (const item of items) {
          if (BigInt(item.offset) < stored) outcomes.push('skipped');
          else if (item.kind === 'dead') {
            dead.push(item.letter);
            outcomes.push('dead');
          } else if (item.kind === 'screen') outcomes.push(await applyScreen(client, item.value));
          else outcomes.push(await applyCatalogue(client, item.value));
        }
        await tx.insertDeadLetters(dead);
        if (BigInt(commit.nextOffset) > stored) await tx.savePartition(commit);
        return outcomes;
      }),
  };
}
