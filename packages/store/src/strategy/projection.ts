import type { ScreenResult, StrategyCatalogue } from '@vault-yield/domain';
import { type Pool, withTransaction } from '../pool/index.js';
import { createProjectionStore } from '../projection/index.js';
import type { RunnerTx } from '../projection/runner-tx.js';
import { projectionTx } from '../projection/tx.js';
import { type ApplyOutcome, applyScreen } from './screen.js';
import { applyCatalogue } from './strategies.js';

/**
 * The strategy side's writes inside one batch transaction, beside the runner's part (offsets, dead
 * letters: RunnerTx) — never the vault projection's writes. Newest wins: an older or duplicate
 * screen or catalogue changes nothing (see applyScreen, applyCatalogue).
 */
export interface StrategyTx extends RunnerTx {
  applyScreen(screen: ScreenResult): Promise<ApplyOutcome>;
  applyCatalogue(catalogue: StrategyCatalogue): Promise<ApplyOutcome>;
}

/** The strategy side of the store: its batch transactions and the offsets its consumers seek to. */
export interface StrategyStore {
  storedOffsets(groupId: string, topic: string, partitions: readonly number[]): Promise<Map<number, string>>;
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: StrategyTx) => Promise<T>): Promise<T>;
}

export function createStrategyStore(pool: Pool): StrategyStore {
  const projection = createProjectionStore(pool);
  return {
    storedOffsets: projection.storedOffsets,
    transaction: (fn) =>
      withTransaction(pool, (client) =>
        fn({
          ...projectionTx(client),
          applyScreen: (screen) => applyScreen(client, screen),
          applyCatalogue: (catalogue) => applyCatalogue(client, catalogue),
        }),
      ),
  };
}
