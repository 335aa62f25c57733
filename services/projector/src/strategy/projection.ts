import type { ApplyOutcome, StrategyTx } from '@vault-yield/store';
import type { Projection } from '../runner/index.js';
import type { DecodedStrategyRecord, StrategyRecordKind } from './decode.js';

/** What the strategy projection did with one message of a batch. */
export interface StrategyApplied {
  offset: string;
  kind: StrategyRecordKind;
  outcome: ApplyOutcome;
}

/**
 * The strategy side as a projection the runner feeds (one per topic: screen results, strategy
 * catalogue): each decoded message replaces what is in place when it is newer; the runner keeps
 * the offsets, the gap check and the dead letters of messages that do not decode.
 */
export function createStrategyProjection(): Projection<DecodedStrategyRecord, StrategyApplied[], StrategyTx> {
  return {
    async apply(tx, items) {
      const out: StrategyApplied[] = [];
      for (const { offset, decoded } of items) {
        const outcome =
          decoded.kind === 'screen'
            ? await tx.applyScreen(decoded.value)
            : await tx.applyCatalogue(decoded.value);
        out.push({ offset, kind: decoded.kind, outcome });
      }
      return { refused: [], out };
    },
  };
}
