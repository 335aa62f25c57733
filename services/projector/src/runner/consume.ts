import {
  type BatchConsumer,
  type BatchConsumerConfig,
  createBatchConsumer,
  type LogBatch,
} from '@vault-yield/log';
import type { RunnerTx } from '@vault-yield/store';
import { type Decoding, type Projection, type RunResult, runBatch } from './batch.js';

/** A batch the runner applied and committed. */
export type Applied<Out> = Extract<RunResult<Out>, { kind: 'applied' }>;

/** Where a projection's batches commit: its stored offsets and its batch transactions. */
export interface RunnerStore<Tx extends RunnerTx> {
  storedOffsets(groupId: string, topic: string, partitions: readonly number[]): Promise<Map<number, string>>;
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
}

export interface RunnerConsumerConfig<D extends Decoding, Out, Tx extends RunnerTx>
  extends Omit<BatchConsumerConfig<D>, 'handleBatch' | 'storedOffsets' | 'offsetsGroupId'> {
  /** The group the offsets are stored under in the store (each batch's `commit.groupId`). */
  offsetsGroupId: string;
  store: RunnerStore<Tx>;
  /** The projection a batch is fed to; `attempt` is 0, then 1 when `retry` asked for it. */
  projection(attempt: number): Projection<D, Out, Tx>;
  /** Whether a batch whose transaction failed with `err` (rolled back whole) is run once more. */
  retry?(err: unknown, batch: LogBatch<D>): boolean;
  /** A batch's transaction failed: its commit's outcome is unknown (the error is thrown on). */
  onFailed?(batch: LogBatch<D>, err: unknown): void;
  /** A batch committed, in `seconds`. */
  onApplied?(batch: LogBatch<D>, run: Applied<Out>, seconds: number): void;
}

/**
 * The one consume loop of every projection: a consumer-group member whose partitions are sought
 * to the offsets stored with the projection, each batch run by the runner (`runBatch`) in one
 * transaction of the projection's store; a batch that does not start at the stored offset is
 * re-read from it, and one met while stopping or after a rebalance is left to be fetched again.
 */
export function createRunnerConsumer<D extends Decoding, Out, Tx extends RunnerTx>(
  config: RunnerConsumerConfig<D, Out, Tx>,
): BatchConsumer {
  const { store, projection, retry, onFailed, onApplied, offsetsGroupId, ...consumer } = config;
  const run = (batch: LogBatch<D>, attempt: number) =>
    store.transaction((tx) => runBatch(tx, batch, projection(attempt)));
  return createBatchConsumer<D>({
    ...consumer,
    offsetsGroupId,
    storedOffsets: (topic, partitions) => store.storedOffsets(offsetsGroupId, topic, partitions),
    async handleBatch(batch, control) {
      if (!control.isActive()) return undefined;
      const started = performance.now();
      let result: RunResult<Out>;
      try {
        try {
          result = await run(batch, 0);
        } catch (err) {
          if (!retry?.(err, batch)) throw err;
          result = await run(batch, 1);
        }
      } catch (err) {
        onFailed?.(batch, err);
        throw err;
      }
      if (result.kind === 'gap') return { seekTo: result.seekTo };
      onApplied?.(batch, result, (performance.now() - started) / 1000);
      return { applied: true };
    },
  });
}
